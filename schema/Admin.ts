/**
 * The admin surface the CLI talks to: `@effect/rpc` over HTTP at `/admin/rpc`,
 * bearer `ADMIN_TOKEN`. It creates workspaces and keys, and shows the re-embedding of stored vectors; it is not
 * public API.
 */
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as RpcMiddleware from "@effect/rpc/RpcMiddleware"
import * as Schema from "effect/Schema"
import { Environment, KeyKind, Plan, Scope } from "./Auth.js"
import { ApiKeyId, WorkspaceId } from "./Ids.js"

export const Workspace = Schema.Struct({
  id: WorkspaceId,
  name: Schema.String,
  owner_email: Schema.String,
  plan: Plan,
  created_at: Schema.String
})
export type Workspace = typeof Workspace.Type

export const ApiKey = Schema.Struct({
  id: ApiKeyId,
  workspace_id: WorkspaceId,
  environment: Environment,
  kind: KeyKind,
  name: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Scope),
  /** What a person recognises: `sk_test_…` with the last four characters. */
  redacted: Schema.String,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
})
export type ApiKey = typeof ApiKey.Type

/** A key as created: the only time the full secret is ever returned. */
export const CreatedApiKey = Schema.Struct({ key: ApiKey, secret: Schema.String })
export type CreatedApiKey = typeof CreatedApiKey.Type

/** Where the re-embedding of stored vectors into the configured provider's space stands (`none`: none was needed). */
export const ReembedStatus = Schema.Literal("none", "queued", "running", "done", "failed")

/** Where the re-indexing of rows written before migration 0048 stands: `done` of `total` rows (passages, then Q&A). */
export const TextSearchReindexStatus = Schema.Struct({
  status: ReembedStatus,
  done: Schema.Number,
  total: Schema.Number,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String)
})
export type TextSearchReindexStatus = typeof TextSearchReindexStatus.Type

/**
 * The embedding space of the stored vectors (`provider:model:dimensions`) and their re-embedding into it after
 * the deployment's provider changed: `done` of `total` rows (chunks, then Q&A), and why it failed.
 */
export const EmbeddingsStatus = Schema.Struct({
  /** What the stored vectors are (or are being re-embedded into); null until a start recorded it. */
  space: Schema.NullOr(Schema.String),
  /** What they were before the last change. */
  previous_space: Schema.NullOr(Schema.String),
  /** The space of the provider the answering process is configured with. */
  configured_space: Schema.String,
  status: ReembedStatus,
  done: Schema.Number,
  total: Schema.Number,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  /** The last failure: of an attempt that will be retried, or of the re-embedding that was given up. */
  last_error: Schema.NullOr(Schema.String),
  /** The re-indexing of the text search of rows written before languages were kept (`none`: none was needed). */
  text_search: TextSearchReindexStatus
})
export type EmbeddingsStatus = typeof EmbeddingsStatus.Type

export class AdminError extends Schema.TaggedError<AdminError>()("AdminError", {
  code: Schema.Literal("not_found", "invalid", "unauthorized"),
  message: Schema.String
}) {}

export class AdminAuth extends RpcMiddleware.Tag<AdminAuth>()("Admin/Auth", {
  failure: AdminError
}) {}

const Email = Schema.String.pipe(Schema.pattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, { message: () => "Expected an e-mail address" }))

export class AdminRpcs extends RpcGroup.make(
  Rpc.make("CreateWorkspace", {
    payload: { name: Schema.NonEmptyTrimmedString, owner_email: Email, plan: Plan },
    success: Workspace,
    error: AdminError
  }),
  Rpc.make("ListWorkspaces", { success: Schema.Array(Workspace), error: AdminError }),
  Rpc.make("CreateKey", {
    payload: {
      workspace_id: WorkspaceId,
      environment: Environment,
      kind: KeyKind,
      name: Schema.optional(Schema.String),
      scopes: Schema.optional(Schema.Array(Scope))
    },
    success: CreatedApiKey,
    error: AdminError
  }),
  Rpc.make("ListKeys", {
    payload: { workspace_id: WorkspaceId },
    success: Schema.Array(ApiKey),
    error: AdminError
  }),
  Rpc.make("RevokeKey", {
    payload: { key_id: ApiKeyId },
    success: ApiKey,
    error: AdminError
  }),
  Rpc.make("EmbeddingsStatus", { success: EmbeddingsStatus, error: AdminError })
).middleware(AdminAuth) {}

/**
 * The admin RPC (`AdminRpcs`) at `POST /admin/rpc`. JSON serialization: the
 * edge accepts only JSON bodies, and the HTTP client protocol reads one JSON
 * array per request. The edge skips API-key auth and rate limits under
 * `/admin/`; `AdminAuth` checks the bearer ADMIN_TOKEN instead. A body that is not
 * one RPC request is refused before the RPC sees it (`Frame.ts`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type { Headers } from "@effect/platform/Headers"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, timingSafeEqual } from "node:crypto"
import { AdminAuth, AdminError, AdminRpcs } from "../../schema/Admin.js"
import type { Environment, KeyKind, Scope } from "../../schema/Auth.js"
import type { WorkspaceId } from "../../schema/Ids.js"
import { ApiKeys, scopesFor } from "../auth/ApiKeys.js"
import { AppConfig } from "../Config.js"
import { Embeddings } from "../knowledge/Embeddings.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { resolveAdminToken } from "./AdminToken.js"
import { checkFrame } from "./Frame.js"

const digest = (s: string) => createHash("sha256").update(s).digest()

const bearer = (headers: Headers): string | undefined => {
  const match = /^Bearer +(\S+) *$/i.exec(headers["authorization"] ?? "")
  return match?.[1]
}

const AdminAuthLive = Layer.effect(
  AdminAuth,
  Effect.gen(function* () {
    const token = yield* resolveAdminToken(yield* AppConfig).pipe(Effect.orDie)
    // Comparing fixed-length digests keeps the comparison constant-time
    // whatever the length of the presented token.
    const expected = Option.map(token, (t) => digest(Redacted.value(t)))
    const unauthorized = new AdminError({
      code: "unauthorized",
      message: Option.isSome(expected)
        ? "Missing or wrong admin token: send `Authorization: Bearer <ADMIN_TOKEN>`"
        : "The admin RPC is disabled until ADMIN_TOKEN is set on the service"
    })
    return AdminAuth.of(({ headers }) => {
      const presented = bearer(headers)
      return Option.isSome(expected) && presented !== undefined && timingSafeEqual(digest(presented), expected.value)
        ? Effect.void
        : Effect.fail(unauthorized)
    })
  })
)

const invalid = (message: string) => new AdminError({ code: "invalid", message })

/** Requested scopes must be ones the key kind can hold; none given means all of them. */
const checkScopes = (kind: KeyKind, requested: ReadonlyArray<Scope> | undefined) => {
  if (requested === undefined) return Effect.succeed(undefined)
  const allowed = scopesFor(kind)
  const wrong = requested.filter((s) => !allowed.includes(s))
  if (wrong.length > 0) {
    const may = allowed.length === 0 ? "no scopes" : `only ${allowed.join(", ")}`
    return Effect.fail(invalid(`A ${kind} key cannot hold ${wrong.join(", ")}; it may hold ${may}`))
  }
  if (allowed.length > 0 && requested.length === 0) {
    return Effect.fail(invalid(`A ${kind} key needs at least one scope; omit scopes to grant all of them`))
  }
  return Effect.succeed([...new Set(requested)])
}

/** The RPC sends a defect to the client without logging it; keep the cause here. */
const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapDefect(effect, (cause) => Effect.logError("admin RPC failed with a defect", cause))

const AdminHandlers = AdminRpcs.toLayer(
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const keys = yield* ApiKeys
    const embeddings = yield* Embeddings

    const existing = (id: WorkspaceId) =>
      Effect.flatMap(workspaces.find(id), (found) =>
        Option.isSome(found)
          ? Effect.void
          : Effect.fail(new AdminError({ code: "not_found", message: `No workspace ${id}` }))
      )

    const createKey = Effect.fn("Admin.createKey")(function* (input: {
      readonly workspace_id: WorkspaceId
      readonly environment: Environment
      readonly kind: KeyKind
      readonly name?: string | undefined
      readonly scopes?: ReadonlyArray<Scope> | undefined
    }) {
      const scopes = yield* checkScopes(input.kind, input.scopes)
      yield* existing(input.workspace_id)
      return yield* keys.create({
        workspaceId: input.workspace_id,
        environment: input.environment,
        kind: input.kind,
        name: input.name,
        scopes
      })
    })

    return AdminRpcs.of({
      CreateWorkspace: ({ name, owner_email, plan }) => logged(workspaces.create({ name, owner_email, plan })),
      ListWorkspaces: () => logged(workspaces.list()),
      CreateKey: (input) => logged(createKey(input)),
      ListKeys: ({ workspace_id }) => logged(Effect.zipRight(existing(workspace_id), keys.list(workspace_id))),
      RevokeKey: ({ key_id }) =>
        Effect.flatMap(keys.revoke(key_id), (revoked) =>
          Option.isSome(revoked)
            ? Effect.succeed(revoked.value)
            : Effect.fail(new AdminError({ code: "not_found", message: `No API key ${key_id}` }))
        ).pipe(logged),
      EmbeddingsStatus: () => logged(embeddings.status())
    })
  })
)

/** Mounted on the API router; the RPC server lives as long as this layer. */
export const AdminRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(RpcServer.toHttpApp(AdminRpcs), (app) => router.post("/admin/rpc", Effect.zipRight(checkFrame, app)))
).pipe(Layer.provide([AdminHandlers, AdminAuthLive, RpcSerialization.layerJson]))

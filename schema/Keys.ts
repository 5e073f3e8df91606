/**
 * API keys managed through the API: a secret key with `write:keys` lists,
 * creates and revokes the keys of its own workspace in its own environment.
 * A key never grants more than its caller holds, and never revokes itself.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, KeyKind, RequiredScope, Scope } from "./Auth.js"
import { ShowsSecret } from "./Endpoint.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { ApiError, InvalidCursor, InvalidLimit, ResourceMissing } from "./Errors.js"
import { ApiKeyId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

const kindDescription =
  "`secret`: `sk_test_`/`sk_live_`, for servers, with scopes; `widget`: `widget_pk_`, public, for the widget surface " +
  "(`widget:tickets`, `widget:chat`); `forms`: `pk_test_`/`pk_live_`, public, for the two form endpoints (no scopes)"

export const Key = Schema.Struct({
  id: ApiKeyId,
  object: Schema.Literal("api_key"),
  kind: KeyKind.annotations({ description: kindDescription }),
  livemode: Schema.Boolean.annotations({ description: "`true` for a live key, `false` for a sandbox key" }),
  name: Schema.NullOr(Schema.String).annotations({ description: "For people; not unique" }),
  scopes: Schema.Array(Scope).annotations({ description: "What the key may do; forms keys hold none" }),
  prefix: Schema.String.annotations({ description: "The visible start of the key, e.g. `sk_test_`" }),
  last4: Schema.String.annotations({ description: "The key's last four characters" }),
  redacted: Schema.String.annotations({
    description: "What a person recognises the key by: `sk_test_…` and the last four characters. The full value is never shown again"
  }),
  created_at: Timestamp
}).annotations({ identifier: "ApiKey", description: "An active API key; revoked keys are not listed" })
export type Key = typeof Key.Type

/** Returned by creation only: the one time the full key is shown. */
export const KeyWithSecret = Schema.Struct({
  ...Key.fields,
  secret: Schema.String.annotations({
    description: "The full key, shown only in this response (and its `Idempotency-Key` replays for 24 h); store it now"
  })
}).annotations({ identifier: "ApiKeyWithSecret" })
export type KeyWithSecret = typeof KeyWithSecret.Type

const Name = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" })
)

export const CreateKey = StrictStruct({
  kind: KeyKind.annotations({ description: kindDescription }),
  name: Schema.optional(Name),
  scopes: Schema.optional(
    Schema.Array(Scope).pipe(Schema.maxItems(64)).annotations({
      description:
        "The scopes to grant, each one the kind can hold (else `400 parameter_invalid`) and one the calling key may grant " +
        "(else `403 key_scope_mismatch`): a secret scope it holds; `widget:tickets` needs `write:tickets`, " +
        "`widget:chat` needs `write:conversations`. Omitted: every scope of the kind the caller may grant. " +
        "Forms keys take none (creating one needs `write:forms`)"
    })
  )
}).annotations({ identifier: "CreateApiKey" })
export type CreateKey = typeof CreateKey.Type

const idPath = HttpApiSchema.param("id", ApiKeyId)


export class KeysGroup extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/v1/keys")
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Key))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:keys")
      .annotate(OpenApi.Summary, "List the active keys of this workspace and environment, newest first")
      .annotate(
        OpenApi.Description,
        "Secret, widget and forms keys of the calling key's workspace, in its environment only (a sandbox key lists " +
          "sandbox keys). Each shows its prefix and last four characters, never the full value."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/keys")
      .setPayload(CreateKey)
      .addSuccess(Envelope(KeyWithSecret), { status: 201 })
      .annotate(RequiredScope, "write:keys")
      .annotate(ShowsSecret, true)
      .annotate(OpenApi.Summary, "Create a key; its full value is returned once")
      .annotate(
        OpenApi.Description,
        "The key belongs to the calling key's workspace and environment (a sandbox key creates `sk_test_` keys). " +
          "A key never grants a scope it could not use itself: asking for one is `403 key_scope_mismatch` with " +
          "`param` `scopes` and the scope named in the message. The full value is in `secret`, in this response only."
      )
  )
  .add(
    HttpApiEndpoint.del("revoke")`/v1/keys/${idPath}`
      .addSuccess(Envelope(Deleted(ApiKeyId, "api_key")))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "write:keys")
      .annotate(OpenApi.Summary, "Revoke a key; its next request is refused")
      .annotate(
        OpenApi.Description,
        "Takes effect at once: the key's next request is `401 invalid_api_key`, on this instance and on every " +
          "other instance on the same PostgreSQL as soon as it hears of it (within `API_KEY_CACHE_SECONDS` at " +
          "worst). A key cannot revoke itself (`400 parameter_invalid`, `param` `id`): create its replacement, " +
          "switch to it, then revoke the old key with the new one. A key of another workspace or environment, or " +
          "one already revoked, is `404 resource_missing`."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("keys"))
  .annotate(OpenApi.Title, "API keys") {}

/** Liveness, readiness and the OpenAPI document: no key needed. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Operational } from "./Endpoint.js"
import { ApiError, ServiceUnavailable } from "./Errors.js"
import { reference } from "./Reference.js"

export const Health = Schema.Struct({ status: Schema.Literal("ok") })

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  database: Schema.Literal("pglite", "postgres"),
  migrations: Schema.Literal("applied")
})


export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/healthz")
      .annotate(Operational, true)
      .addSuccess(Health)
      .annotate(OpenApi.Description, "`{\"status\":\"ok\"}` while the process answers")
      .annotate(OpenApi.Summary, "Liveness: the process answers")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .annotate(Operational, true)
      .addSuccess(Readiness)
      .addError(ApiError(ServiceUnavailable))
      .annotate(
        OpenApi.Description,
        "`200` when the database answers and every migration is applied, else `503 service_unavailable`"
      )
      .annotate(OpenApi.Summary, "Readiness: the database answers and every migration is applied")
  )
  .add(
    HttpApiEndpoint.get("openapi", "/v1/openapi.json")
      .addSuccess(Schema.Unknown)
      .annotate(OpenApi.Description, "OpenAPI 3.1")
      .annotate(OpenApi.Summary, "This document")
  )
  // the configuration's table is a file of its own: the README points at it, and a test holds it to `src/Config.ts`
  .annotate(OpenApi.Description, reference("system", { configuration: reference("configuration") }))
  .annotate(OpenApi.Title, "System") {}

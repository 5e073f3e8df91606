/**
 * The forms area as the composition root uses it: its programs (over the tickets its submissions create and
 * the `LeadTarget` port, which the leads area serves), its API groups and routes, and the edge's form CORS port.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Authentication } from "../../schema/Auth.js"
import { FormId } from "../../schema/Forms.js"
import { FormOrigins } from "../http/Cors.js"
import { Tickets } from "../tickets/Tickets.js"
import { DemoRoutes } from "./Demo.js"
import { ElementRoutes } from "./ElementBundle.js"
import { Forms } from "./Forms.js"
import { FormsHttp, FormsPreflightRoutes, FormsPublicHttp } from "./Http.js"
import { IdentitySecrets } from "./Identity.js"
import { FormSubmissions } from "./Submit.js"

export const Live = Layer.mergeAll(Forms.Default, IdentitySecrets.Default, FormSubmissions.Default).pipe(
  Layer.provide(Tickets.Default)
)

/** Its API groups: the server builds them with only `ApiServices`, the services their handlers use (`Server.ts`). */
export const ApiGroups = Layer.mergeAll(FormsHttp, FormsPublicHttp)
export const ApiServices = [Authentication, Forms, IdentitySecrets, FormSubmissions] as const

/** Beside the API: the form endpoints' preflights, the `<service-form>` bundle, the demo page. */
export const Routes = Layer.mergeAll(FormsPreflightRoutes, ElementRoutes, DemoRoutes)

const decodeFormId = Schema.decodeUnknownOption(FormId)

/** The edge answers the form endpoints' CORS from the forms' `allowed_origins` (ids that cannot be a form's: none). */
export const FormOriginsLive = Layer.effect(
  FormOrigins,
  Effect.map(FormSubmissions, (submissions) => ({
    allowedOrigin: (formId: string, origin: string | undefined) =>
      Option.match(decodeFormId(formId), {
        onNone: () => Effect.succeed(Option.none<string>()),
        onSome: (id) => submissions.corsOrigin(id, origin)
      })
  }))
).pipe(Layer.provide(Live))

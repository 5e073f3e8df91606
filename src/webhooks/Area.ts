/**
 * The webhooks area as the composition root uses it: its programs, its API group, its dispatcher, and the
 * outbox's `FanOut` port (an event becomes a delivery per matching endpoint).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { background } from "../Background.js"
import { Dispatcher } from "./Dispatcher.js"
import { WebhookFanOut } from "./FanOut.js"
import { WebhooksHttp } from "./Http.js"
import { Webhooks } from "./Webhooks.js"

export const Live = Layer.mergeAll(Webhooks.Default, Dispatcher.Default)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = WebhooksHttp
export const ApiServices = [Authentication, Webhooks] as const

export const FanOutLive = WebhookFanOut

/** The dispatcher. */
export const Workers = Layer.unwrapEffect(Effect.map(Dispatcher, (dispatcher) => background(dispatcher.run)))

/**
 * The webhooks area as the composition root uses it: its programs, its API group, its dispatcher, and the
 * outbox's `FanOut` port (an event becomes a delivery per matching endpoint).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { background } from "../Background.js"
import { AppConfig } from "../Config.js"
import { isolate } from "../Isolate.js"
import { Dispatcher } from "./Dispatcher.js"
import { WebhookFanOut } from "./FanOut.js"
import { WebhooksHttp } from "./Http.js"
import { Webhooks } from "./Webhooks.js"

export const Live = Layer.mergeAll(Webhooks.Default, Dispatcher.Default)

/** Built with only the services its handlers use (see `Isolate.ts`). */
export const ApiGroups = isolate(Authentication, Webhooks)(WebhooksHttp)

export const FanOutLive = WebhookFanOut

/** Built with only what it uses (see `Isolate.ts`). */
export const Workers = isolate(AppConfig, Dispatcher)(
  Layer.unwrapEffect(Effect.map(Dispatcher, (dispatcher) => background(dispatcher.run)))
)

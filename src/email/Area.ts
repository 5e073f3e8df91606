/** The e-mail outbox as the composition root uses it: its programs and its sender. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { background } from "../Background.js"
import { AppConfig } from "../Config.js"
import { isolate } from "../Isolate.js"
import { Emails } from "./Emails.js"

export const Live = Emails.Default

/** Built with only what it uses (see `Isolate.ts`). */
export const Workers = isolate(AppConfig, Emails)(Layer.unwrapEffect(Effect.map(Emails, (emails) => background(emails.run))))

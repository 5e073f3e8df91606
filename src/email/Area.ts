/** The e-mail outbox as the composition root uses it: its programs and its sender. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { background } from "../Background.js"
import { Emails } from "./Emails.js"

export const Live = Emails.Default

/** The sender. */
export const Workers = Layer.unwrapEffect(Effect.map(Emails, (emails) => background(emails.run)))

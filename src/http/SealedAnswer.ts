/**
 * An idempotency record of an answer that shows a secret once (`ShowsSecret`: a new key's value, a signing or
 * identity secret) keeps that answer sealed (`Sealed.ts`) under a key derived from the calling API key's own value
 * by HMAC, which the SHA-256 hash the database keeps of it cannot give, and bound to the record (its workspace,
 * environment and `Idempotency-Key`). So the database alone never holds such a secret readable, a retry by the
 * same key gets the answer again, and another key of the workspace cannot open it. No server secret is needed.
 */
import type * as Option from "effect/Option"
import { createHmac } from "node:crypto"
import * as Sealed from "../Sealed.js"

const keyOf = (credential: string) => createHmac("sha256", credential).update("assistant-platform sealed answer").digest()

export const seal = (plaintext: string, credential: string, context: string): string =>
  Sealed.seal(keyOf(credential), plaintext, context)

/** The plaintext, or none when it was sealed by another key or for another record. */
export const open = (sealed: string, credential: string, context: string): Option.Option<string> =>
  Sealed.open(keyOf(credential), sealed, context)

/**
 * An idempotency record of an answer that shows a secret once (`ShowsSecret`: a new key's value, a signing or
 * identity secret) keeps that answer sealed: AES-256-GCM under a key derived from the calling API key's own value
 * by HMAC, which the SHA-256 hash the database keeps of it cannot give, and bound to the record (its workspace,
 * environment and `Idempotency-Key`). So the database alone never holds such a secret readable, a retry by the
 * same key gets the answer again, and another key of the workspace cannot open it. No server secret is needed.
 */
import * as Option from "effect/Option"
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto"

const version = "v1"

const keyOf = (credential: string) => createHmac("sha256", credential).update("assistant-platform sealed answer").digest()

/** `v1.<iv>.<ciphertext and tag>`, base64url. */
export const seal = (plaintext: string, credential: string, context: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(credential), iv)
  cipher.setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()])
  return `${version}.${iv.toString("base64url")}.${body.toString("base64url")}`
}

/** The plaintext, or none when it was sealed by another key or for another record. */
export const open = (sealed: string, credential: string, context: string): Option.Option<string> => {
  const [v, iv, body] = sealed.split(".")
  if (v !== version || iv === undefined || body === undefined) return Option.none()
  const bytes = Buffer.from(body, "base64url")
  if (bytes.length < 16) return Option.none()
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(credential), Buffer.from(iv, "base64url"))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(bytes.subarray(bytes.length - 16))
    return Option.some(Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8"))
  } catch {
    return Option.none()
  }
}

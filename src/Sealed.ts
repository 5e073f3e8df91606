/**
 * AES-256-GCM sealing of a text under a 32-byte key, bound to a context (authenticated, not stored): the one
 * format for what the service stores encrypted (the identity secret's `SecretBox`, idempotency records of
 * answers that show a secret).
 */
import * as Option from "effect/Option"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

const version = "v1"
const tagBytes = 16

/** `v1.<iv>.<ciphertext and tag>`, base64url. */
export const seal = (key: Uint8Array, plaintext: string, context: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  cipher.setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()])
  return `${version}.${iv.toString("base64url")}.${body.toString("base64url")}`
}

/** The plaintext, or none when it was sealed under another key or context (or is no sealed text). */
export const open = (key: Uint8Array, sealed: string, context: string): Option.Option<string> => {
  const [v, iv, body] = sealed.split(".")
  if (v !== version || iv === undefined || body === undefined) return Option.none()
  const bytes = Buffer.from(body, "base64url")
  if (bytes.length < tagBytes) return Option.none()
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(bytes.subarray(bytes.length - tagBytes))
    return Option.some(Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - tagBytes)), decipher.final()]).toString("utf8"))
  } catch {
    return Option.none()
  }
}

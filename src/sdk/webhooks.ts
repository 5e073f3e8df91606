/**
 * Receiver side: verify a delivery before trusting it.
 *
 *   const event = verifyWebhook(rawBody, req.headers["service-signature"], process.env.WHSEC!)
 *
 * Pass the raw body bytes as received (not re-serialised JSON). Throws
 * `WebhookVerificationError` when the header is malformed, no `v1=` signature
 * matches, or `t` is outside the tolerance (replay protection, 5 minutes).
 */
import { timingSafeEqual } from "node:crypto"
import { signPayload } from "../webhooks/Signature.js"

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
}

export interface VerifyOptions {
  readonly toleranceSeconds?: number
  /** The receiver's current time in Unix seconds; defaults to the system clock. */
  readonly now?: number
}

export const verifyWebhook = (
  rawBody: string | Uint8Array,
  signatureHeader: string | undefined | null,
  secret: string,
  { toleranceSeconds = 300, now = Math.floor(Date.now() / 1000) }: VerifyOptions = {}
): unknown => {
  if (typeof signatureHeader !== "string" || signatureHeader === "") {
    throw new WebhookVerificationError("Missing Service-Signature header")
  }
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const part of signatureHeader.split(",")) {
    const [key, value] = part.trim().split("=", 2)
    if (key === "t" && value !== undefined && /^[0-9]{1,12}$/.test(value)) timestamp = Number(value)
    else if (key === "v1" && value !== undefined && /^[0-9a-f]{64}$/.test(value)) signatures.push(value)
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookVerificationError("Malformed Service-Signature header")
  }
  if (Math.abs(now - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError("Timestamp outside the tolerance window")
  }
  const body = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody)
  const expected = Buffer.from(signPayload(secret, timestamp, body), "hex")
  const matches = signatures.some((s) => timingSafeEqual(Buffer.from(s, "hex"), expected))
  if (!matches) throw new WebhookVerificationError("No signature matches the payload")
  return JSON.parse(body)
}

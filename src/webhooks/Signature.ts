/**
 * `Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 of `<t>.<raw body>`
 * keyed by the whole `whsec_` string — Stripe's scheme, so Stripe's verifiers
 * accept it. During a rotation both secrets sign, giving two `v1=` entries.
 */
import { createHmac } from "node:crypto"

export const signPayload = (secret: string, timestamp: number, body: string): string =>
  createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex")

export const signatureHeader = (secrets: ReadonlyArray<string>, timestamp: number, body: string): string =>
  [`t=${timestamp}`, ...secrets.map((s) => `v1=${signPayload(s, timestamp, body)}`)].join(",")

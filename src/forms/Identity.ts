/**
 * Signed identity for forms: the workspace's identity secret (one per
 * environment, sealed at rest) and the verification of HS256 tokens with jose.
 *
 * Each process caches a workspace's secret for at most five minutes by the
 * Clock, so a rotation made by another instance takes effect everywhere within
 * that time; the instance that rotates forgets its copy at once.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { errors, jwtVerify } from "jose"
import type { IdentitySecret } from "../../schema/Forms.js"
import type { Tenant } from "../../schema/Tenant.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { iso, now } from "../Time.js"
import { FormsRepo } from "./FormsRepo.js"
import { SecretBox } from "./SecretBox.js"

/** How long a process trusts its copy of a secret. */
export const secretCacheMillis = 5 * 60_000

/** What a valid token says about the visitor. */
export interface Identity {
  readonly email: string
  readonly name: Option.Option<string>
  readonly sub: Option.Option<string>
}

/**
 * The longest an identity token may live: `exp` at most this long after `iat` (24 h: a token is made per page
 * view or session by the integrator's backend, as in other chat widgets' identity verification, not a standing credential).
 * A token that leaks from a page is then good for a day at most, never for as long as its issuer chose.
 */
export const maxTokenLifetimeSeconds = 24 * 60 * 60

/** How far in the future `iat` may be (the integrator's clock running ahead of ours); later is refused. */
export const issuedAtSkewSeconds = 60

/** Why a token was refused (for logs and the message; the code is always `identity_invalid`). */
export type Refusal = "no_secret" | "malformed" | "bad_claims" | "rejected" | "expired" | "too_long_lived" | "issued_in_future"

/** The message of `401 identity_invalid` for a refusal (none says whether a secret exists). */
export const refusalMessage = (refused: Refusal): string => {
  switch (refused) {
    case "expired":
      return "The identity_token has expired (its `exp` is past); sign a fresh one."
    case "too_long_lived":
      return `The identity_token lives too long: \`exp\` must be at most ${maxTokenLifetimeSeconds} seconds (24 hours) after \`iat\`.`
    case "issued_in_future":
      return "The identity_token's `iat` is in the future; sign it with the current time."
    default:
      return "The identity_token is malformed, expired or not signed with this workspace's identity secret."
  }
}

export type Verification = { readonly _tag: "Verified"; readonly identity: Identity } | { readonly _tag: "Refused"; readonly refused: Refusal }

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const maxTokenLength = 4096

const contextOf = (tenant: Tenant) => `identity-secret:${tenant.workspaceId}:${tenant.environment}`

export class IdentitySecrets extends Effect.Service<IdentitySecrets>()("Forms/IdentitySecrets", {
  effect: Effect.gen(function* () {
    const repo = yield* FormsRepo
    const box = yield* SecretBox
    const ids = yield* IdGenerator
    const cache = yield* Ref.make(new Map<string, { readonly secret: Option.Option<string>; readonly at: number }>())

    const keyOf = (tenant: Tenant) => `${tenant.workspaceId}:${tenant.environment}`

    const load = (tenant: Tenant) =>
      Effect.gen(function* () {
        const row = yield* repo.loadSecret(tenant)
        if (Option.isNone(row)) return Option.none<string>()
        return yield* box.open(row.value.sealed, contextOf(tenant))
      })

    /** The secret tokens are checked against, from the cache while it is younger than five minutes. */
    const current = (tenant: Tenant) =>
      Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        const cached = (yield* Ref.get(cache)).get(keyOf(tenant))
        if (cached !== undefined && at - cached.at < secretCacheMillis && at >= cached.at) return cached.secret
        const secret = yield* load(tenant)
        yield* Ref.update(cache, (m) => new Map(m).set(keyOf(tenant), { secret, at }))
        return secret
      })

    const rotate = Effect.fn("IdentitySecrets.rotate")(function* (tenant: Tenant) {
      const secret = `idsec_${yield* ids.secret(48)}`
      const at = yield* now
      yield* repo.storeSecret(tenant, yield* box.seal(secret, contextOf(tenant)), at)
      yield* Ref.update(cache, (m) => {
        const next = new Map(m)
        next.delete(keyOf(tenant))
        return next
      })
      return { object: "identity_secret", environment: tenant.environment, secret, rotated_at: iso(at) } satisfies IdentitySecret
    })

    /**
     * The identity a token proves, or why it proves none. HS256 only; `email`, `iat` and `exp` required, `exp` at
     * most `maxTokenLifetimeSeconds` after `iat`, `iat` not in the future (beyond `issuedAtSkewSeconds`).
     */
    const verify = Effect.fn("IdentitySecrets.verify")(function* (tenant: Tenant, token: unknown): Effect.fn.Return<Verification> {
      if (typeof token !== "string" || token.length === 0 || token.length > maxTokenLength) {
        return { _tag: "Refused", refused: "malformed" }
      }
      const secret = yield* current(tenant).pipe(Effect.catchAll(() => Effect.succeed(Option.none<string>())))
      if (Option.isNone(secret)) return { _tag: "Refused", refused: "no_secret" }
      const at = yield* now
      const verified = yield* Effect.promise(() =>
        jwtVerify(token, new TextEncoder().encode(secret.value), {
          algorithms: ["HS256"],
          requiredClaims: ["email", "iat", "exp"],
          currentDate: at
        }).then(
          (r) => ({ ok: true as const, payload: r.payload }),
          // a correctly signed token past its `exp` (jose checks the signature first)
          (error: unknown) => ({ ok: false as const, expired: error instanceof errors.JWTExpired })
        )
      )
      if (!verified.ok) return { _tag: "Refused", refused: verified.expired ? "expired" : "rejected" }
      const { email, name, sub, iat, exp } = verified.payload
      if (typeof email !== "string" || email.length > 320 || !emailShape.test(email)) return { _tag: "Refused", refused: "bad_claims" }
      if (typeof iat !== "number" || typeof exp !== "number" || (name !== undefined && typeof name !== "string") || (sub !== undefined && typeof sub !== "string")) {
        return { _tag: "Refused", refused: "bad_claims" }
      }
      if (exp - iat > maxTokenLifetimeSeconds) return { _tag: "Refused", refused: "too_long_lived" }
      if (iat > at.getTime() / 1000 + issuedAtSkewSeconds) return { _tag: "Refused", refused: "issued_in_future" }
      const identity: Identity = {
        email,
        name: typeof name === "string" && name.trim() !== "" ? Option.some(name.trim().slice(0, 200)) : Option.none(),
        sub: typeof sub === "string" ? Option.some(sub.slice(0, 200)) : Option.none()
      }
      return { _tag: "Verified", identity }
    })

    return { rotate, verify, current } as const
  }),
  dependencies: [FormsRepo.Default, SecretBox.Default]
}) {}

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
import { jwtVerify } from "jose"
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

/** Why a token was refused (for logs; the caller only learns `identity_invalid`). */
export type Refusal = "no_secret" | "malformed" | "bad_claims" | "rejected"

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

    /** The identity a token proves, or why it proves none. HS256 only; `email`, `iat` and `exp` required. */
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
          () => ({ ok: false as const })
        )
      )
      if (!verified.ok) return { _tag: "Refused", refused: "rejected" }
      const { email, name, sub, iat } = verified.payload
      if (typeof email !== "string" || email.length > 320 || !emailShape.test(email)) return { _tag: "Refused", refused: "bad_claims" }
      if (typeof iat !== "number" || (name !== undefined && typeof name !== "string") || (sub !== undefined && typeof sub !== "string")) {
        return { _tag: "Refused", refused: "bad_claims" }
      }
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

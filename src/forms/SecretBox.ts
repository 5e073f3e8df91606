/**
 * Seals secrets the service must read back (the identity secret) with AES-256-GCM
 * under `SECRET_KEY`. Unset, an embedded service generates one and keeps it under
 * `DATA_DIR/secret-key` (as it does the admin token); with `DATABASE_URL` the
 * operator must set it, since every instance needs the same key. The key is
 * resolved on first use, so a deployment that never stores a secret needs none.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import { ServiceUnavailable } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
import { keptSecret } from "../KeptSecret.js"
import * as Sealed from "../Sealed.js"

const derive = (secret: string) => createHash("sha256").update(`assistant-platform secret box\n${secret}`).digest()

const kept = (dataDir: string) => keptSecret(dataDir, "secret-key")

export class SecretBox extends Effect.Service<SecretBox>()("Forms/SecretBox", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const configured =
      config.secretKey !== undefined && Redacted.value(config.secretKey).trim() !== ""
        ? Option.some(Redacted.value(config.secretKey))
        : Option.none()
    if (Option.isNone(configured) && Option.isSome(config.databaseUrl)) {
      yield* Effect.logWarning("SECRET_KEY is not set: identity secrets cannot be stored or read until it is")
    }
    const key = yield* Effect.cached(
      Option.isSome(configured)
        ? Effect.succeed(derive(configured.value))
        : Option.isNone(config.databaseUrl)
          ? Effect.map(kept(config.dataDir), derive)
          : Effect.fail(new ServiceUnavailable({ message: "SECRET_KEY is not configured on this service" }))
    )

    /** `v1.<iv>.<ciphertext+tag>` (`Sealed.ts`), bound to `context` (authenticated, not stored). */
    const seal = (plaintext: string, context: string) => Effect.map(key, (k) => Sealed.seal(k, plaintext, context))

    /** The plaintext, or none when the value was sealed under another key or context. */
    const open = (sealed: string, context: string) => Effect.map(key, (k) => Sealed.open(k, sealed, context))

    return { seal, open } as const
  })
}) {}

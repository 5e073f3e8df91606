/**
 * Where the cursor-signing key comes from. `CURSOR_SECRET` wins; else it is
 * derived from `SECRET_KEY` with HKDF under a label of its own (every instance
 * of a deployment shares `SECRET_KEY`, so they agree on it); else, in embedded
 * mode, a secret generated once and kept under `DATA_DIR`. With a shared
 * database and neither set, each process draws its own: cursors then hold only
 * on the instance that issued them.
 *
 * Never from `ADMIN_TOKEN`: a cursor is handed to every API key holder, and a
 * key derived from the admin token would let any of them test guesses of that
 * token offline against it.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, hkdfSync, randomBytes } from "node:crypto"
import { AppConfig } from "../Config.js"
import { keptSecret } from "../KeptSecret.js"
import { CursorKey } from "./Pagination.js"

/** A key of its own for `CURSOR_SECRET` or the kept file (both exist only to sign cursors). */
const fromCursorSecret = (secret: string) =>
  Redacted.make(new Uint8Array(createHash("sha256").update(`assistant-platform cursor key\n${secret}`).digest()))

/**
 * HKDF-SHA256 of `SECRET_KEY`. The label is used nowhere else (the secret box derives its key otherwise), so the
 * cursor key says nothing about the key that seals stored secrets, nor the other way round.
 */
const cursorKeyLabel = "assistant-platform/list-cursor-hmac/v1"
const fromSecretKey = (secretKey: string) =>
  Redacted.make(new Uint8Array(hkdfSync("sha256", secretKey, "", cursorKeyLabel, 32)))

const nonEmpty = (r: Redacted.Redacted<string> | undefined) =>
  r !== undefined && Redacted.value(r).trim() !== "" ? Option.some(Redacted.value(r)) : Option.none()

const kept = (dataDir: string) => keptSecret(dataDir, "cursor-secret")

export const CursorKeyLive = Layer.effect(
  CursorKey,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const cursorSecret = nonEmpty(config.cursorSecret)
    if (Option.isSome(cursorSecret)) return fromCursorSecret(cursorSecret.value)
    const secretKey = nonEmpty(config.secretKey)
    if (Option.isSome(secretKey)) return fromSecretKey(secretKey.value)
    if (Option.isNone(config.databaseUrl)) return fromCursorSecret(yield* kept(config.dataDir))
    yield* Effect.logWarning(
      "Neither CURSOR_SECRET nor SECRET_KEY is set: list cursors are valid only on the instance that issued them"
    )
    return fromCursorSecret(randomBytes(32).toString("base64url"))
  })
)

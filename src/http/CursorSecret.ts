/**
 * Where the cursor-signing key comes from. `CURSOR_SECRET` wins; else it is
 * derived from a configured `ADMIN_TOKEN` (every instance has the same one);
 * else, in embedded mode, a secret generated once and kept under `DATA_DIR`
 * like the admin token. With a shared database and neither set, each process
 * draws its own: cursors then hold only on the instance that issued them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, randomBytes } from "node:crypto"
import { AppConfig } from "../Config.js"
import { keptSecret } from "../KeptSecret.js"
import { CursorKey } from "./Pagination.js"

const derive = (secret: string) =>
  Redacted.make(new Uint8Array(createHash("sha256").update(`assistant-platform cursor key\n${secret}`).digest()))

const nonEmpty = (r: Redacted.Redacted<string> | undefined) =>
  r !== undefined && Redacted.value(r).trim() !== "" ? Option.some(Redacted.value(r)) : Option.none()

const kept = (dataDir: string) => keptSecret(dataDir, "cursor-secret")

export const CursorKeyLive = Layer.effect(
  CursorKey,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const configured = Option.orElse(nonEmpty(config.cursorSecret), () =>
      Option.flatMap(config.adminToken, (t) => nonEmpty(t))
    )
    if (Option.isSome(configured)) return derive(configured.value)
    if (Option.isNone(config.databaseUrl)) return derive(yield* kept(config.dataDir))
    yield* Effect.logWarning(
      "Neither CURSOR_SECRET nor ADMIN_TOKEN is set: list cursors are valid only on the instance that issued them"
    )
    return derive(randomBytes(32).toString("base64url"))
  })
)

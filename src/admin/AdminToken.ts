/**
 * Where the admin bearer token comes from. `ADMIN_TOKEN` wins. In embedded mode
 * one process owns `DATA_DIR`, so the service keeps a generated token there and
 * the CLI on the same machine reads it. With a shared database there is no file
 * every instance would agree on, so without `ADMIN_TOKEN` there is no token.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { IdGenerator } from "../../layers/IdGenerator.js"
import type { AppConfigShape } from "../Config.js"

// base62: about 256 bits, past `ADMIN_TOKEN_MIN_LENGTH` (the same token set as `ADMIN_TOKEN` must start)
const tokenLength = 43

export const adminTokenPath = (dataDir: string) => Effect.map(Path.Path, (path) => path.join(dataDir, "admin-token"))

/** The token kept under `dataDir`, if there is one (the CLI's fallback). */
export const readAdminToken = (
  dataDir: string
): Effect.Effect<Option.Option<Redacted.Redacted<string>>, PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const file = yield* adminTokenPath(dataDir)
    if (!(yield* fs.exists(file))) return Option.none()
    const token = (yield* fs.readFileString(file)).trim()
    return token === "" ? Option.none() : Option.some(Redacted.make(token))
  })

/** Reads the token file, or creates it (mode 0600) when there is none. */
const readOrCreate = (dataDir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const file = yield* adminTokenPath(dataDir)
    const existing = yield* readAdminToken(dataDir)
    if (Option.isSome(existing)) return existing.value
    const token = yield* Effect.flatMap(IdGenerator, (ids) => ids.secret(tokenLength))
    yield* fs.makeDirectory(dataDir, { recursive: true })
    // `wx`: never overwrite a token someone else wrote meanwhile; a leftover empty
    // file is replaced, since it cannot authenticate anyone.
    const exists = yield* fs.exists(file)
    yield* fs.writeFileString(file, `${token}\n`, { flag: exists ? "w" : "wx", mode: 0o600 })
    if (exists) yield* fs.chmod(file, 0o600)
    yield* Effect.logInfo(`generated an admin token in ${file} (the CLI on this machine reads it from there)`)
    return Redacted.make(token)
  })

/**
 * The token the admin RPC accepts, resolved once at start. `None` means the
 * admin RPC refuses every call.
 */
export const resolveAdminToken = (
  config: AppConfigShape
): Effect.Effect<Option.Option<Redacted.Redacted<string>>, PlatformError, FileSystem.FileSystem | Path.Path | IdGenerator> => {
  // `ADMIN_TOKEN=` (empty) counts as unset rather than as a token no one can send.
  const configured = Option.filter(config.adminToken, (t) => Redacted.value(t).trim() !== "")
  return Option.isSome(configured)
    ? Effect.succeed(configured)
    : Option.isNone(config.databaseUrl)
      ? Effect.map(readOrCreate(config.dataDir), Option.some)
      : Effect.as(
          Effect.logWarning(
            "ADMIN_TOKEN is not set: the admin RPC (/admin/rpc) refuses every call. Set ADMIN_TOKEN to use the admin CLI."
          ),
          Option.none()
        )
}

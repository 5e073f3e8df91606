/**
 * A random secret generated once and kept in a file under `DATA_DIR` (mode 0600),
 * for an embedded service that was given none: the same secret after a restart.
 * A `DATA_DIR` it cannot read or write is a broken installation: the start dies.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import { join } from "node:path"

export const keptSecret = (dataDir: string, fileName: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const file = join(dataDir, fileName)
    if (yield* fs.exists(file)) {
      const existing = (yield* fs.readFileString(file)).trim()
      if (existing !== "") return existing
    }
    const secret = randomBytes(32).toString("base64url")
    yield* fs.makeDirectory(dataDir, { recursive: true })
    yield* fs.writeFileString(file, `${secret}\n`, { mode: 0o600 })
    return secret
  }).pipe(Effect.provide(NodeFileSystem.layer), Effect.orDie)

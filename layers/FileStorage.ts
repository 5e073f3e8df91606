/**
 * Bytes of uploaded files, by key (the file id). Directory: one file per key
 * under a folder (default `DATA_DIR/files`). Memory: tests.
 *
 * Keys are ids the service minted, so a key outside `[A-Za-z0-9_-]` is a bug
 * in the caller: it dies rather than touch a path it did not mean.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { randomBytes } from "node:crypto"

export interface FileStorageShape {
  readonly put: (key: string, bytes: Uint8Array) => Effect.Effect<void>
  readonly get: (key: string) => Effect.Effect<Option.Option<Uint8Array>>
  readonly remove: (key: string) => Effect.Effect<void>
}

export class FileStorage extends Context.Tag("Layers/FileStorage")<FileStorage, FileStorageShape>() {}

const safeKey = /^[A-Za-z0-9_-]{1,200}$/

const checked = (key: string): Effect.Effect<string> =>
  safeKey.test(key) ? Effect.succeed(key) : Effect.dieMessage(`FileStorage: refused key ${JSON.stringify(key)}`)

const isNotFound = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT"

export const layerDirectory = (dir: string): Layer.Layer<FileStorage> =>
  Layer.effect(
    FileStorage,
    Effect.gen(function* () {
      const root = resolve(dir)
      yield* Effect.promise(() => mkdir(root, { recursive: true }))
      const pathOf = (key: string) => checked(key).pipe(Effect.map((k) => join(root, k)))
      return FileStorage.of({
        // write beside, then rename: a reader never sees half a file
        put: (key, bytes) =>
          Effect.flatMap(pathOf(key), (path) =>
            Effect.promise(async () => {
              const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`
              await writeFile(temporary, bytes)
              await rename(temporary, path)
            })
          ),
        get: (key) =>
          Effect.flatMap(pathOf(key), (path) =>
            Effect.tryPromise({ try: () => readFile(path), catch: (error) => error }).pipe(
              Effect.map((buffer) => Option.some(new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength))),
              Effect.catchIf(isNotFound, () => Effect.succeed(Option.none())),
              Effect.orDie
            )
          ),
        remove: (key) => Effect.flatMap(pathOf(key), (path) => Effect.promise(() => rm(path, { force: true })))
      })
    })
  )

export const layerMemory: Layer.Layer<FileStorage> = Layer.effect(
  FileStorage,
  Effect.gen(function* () {
    const store = yield* Ref.make(new Map<string, Uint8Array>())
    return FileStorage.of({
      // copies in and out, as a disk would: callers may reuse their buffers
      put: (key, bytes) =>
        Effect.flatMap(checked(key), (k) => Ref.update(store, (map) => new Map(map).set(k, bytes.slice()))),
      get: (key) =>
        Effect.flatMap(checked(key), (k) =>
          Ref.get(store).pipe(Effect.map((map) => Option.map(Option.fromNullable(map.get(k)), (b) => b.slice())))
        ),
      remove: (key) =>
        Effect.flatMap(checked(key), (k) =>
          Ref.update(store, (map) => {
            const next = new Map(map)
            next.delete(k)
            return next
          })
        )
    })
  })
)

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as FileStorage from "../../layers/FileStorage.js"

const bytes = (text: string) => new TextEncoder().encode(text)

const contract = (name: string, layer: () => Layer.Layer<FileStorage.FileStorage>) =>
  describe(`FileStorage (${name})`, () => {
    it.effect("put, get, overwrite, remove; an unknown key is none", () =>
      Effect.gen(function* () {
        const files = yield* FileStorage.FileStorage
        expect(yield* files.get("file_missing")).toEqual(Option.none())
        const original = bytes("first")
        yield* files.put("file_a", original)
        original[0] = 0 // the stored copy is the caller's bytes at put time
        expect(new TextDecoder().decode(Option.getOrThrow(yield* files.get("file_a")))).toBe("first")
        yield* files.put("file_a", bytes("second"))
        expect(new TextDecoder().decode(Option.getOrThrow(yield* files.get("file_a")))).toBe("second")
        yield* files.remove("file_a")
        expect(yield* files.get("file_a")).toEqual(Option.none())
        yield* files.remove("file_a") // removing twice is fine
      }).pipe(Effect.provide(layer())))

    it.effect("keys that could leave the folder are refused", () =>
      Effect.gen(function* () {
        const files = yield* FileStorage.FileStorage
        for (const key of ["../escape", "a/b", "..", "", "file_a\u0000", "C:\\x", "/etc/passwd"]) {
          expect(Exit.isFailure(yield* Effect.exit(files.put(key, bytes("x"))))).toBe(true)
          expect(Exit.isFailure(yield* Effect.exit(files.get(key)))).toBe(true)
          expect(Exit.isFailure(yield* Effect.exit(files.remove(key)))).toBe(true)
        }
      }).pipe(Effect.provide(layer())))
  })

contract("memory", () => FileStorage.layerMemory)

const root = mkdtempSync(join(tmpdir(), "files-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
contract("directory", () => FileStorage.layerDirectory(join(root, `store-${Math.random().toString(36).slice(2)}`)))

describe("FileStorage (directory) on disk", () => {
  it.effect("creates its folder, writes one file per key and nothing outside it; a new layer reads old files", () =>
    Effect.gen(function* () {
      const dir = join(root, "persist", "files")
      yield* Effect.gen(function* () {
        const files = yield* FileStorage.FileStorage
        yield* files.put("file_1", new Uint8Array([1, 2, 3]))
        yield* Effect.exit(files.put("../outside", bytes("x")))
      }).pipe(Effect.provide(FileStorage.layerDirectory(dir)))
      expect(readdirSync(dir)).toEqual(["file_1"])
      expect(existsSync(join(root, "persist", "outside"))).toBe(false)
      const again = yield* Effect.flatMap(FileStorage.FileStorage, (files) => files.get("file_1")).pipe(
        Effect.provide(FileStorage.layerDirectory(dir))
      )
      expect(Option.map(again, (b) => [...b])).toEqual(Option.some([1, 2, 3]))
      rmSync(join(root, "persist"), { recursive: true, force: true })
    }))
})

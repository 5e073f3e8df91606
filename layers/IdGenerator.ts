/**
 * Mints prefixed ids and secrets. Live: cryptographic randomness. Test: a
 * counter, so ids in assertions are predictable.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomFillSync, randomUUID } from "node:crypto"
import type { IdPrefix } from "../schema/Ids.js"

export interface IdGeneratorShape {
  /** `${prefix}_` followed by 24 base62 characters (about 143 bits). */
  readonly make: (prefix: IdPrefix) => Effect.Effect<string>
  /** `length` base62 characters for secrets such as API keys. */
  readonly secret: (length: number) => Effect.Effect<string>
  /** A version 4 UUID, for internal keys stored as `uuid`. */
  readonly uuid: Effect.Effect<string>
}

export class IdGenerator extends Context.Tag("Layers/IdGenerator")<IdGenerator, IdGeneratorShape>() {}

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * Random bytes are drawn from the system 4 KiB at a time: one call per id (one
 * per request, for its request id) cost more than building the id.
 */
const pool = Buffer.alloc(4096)
let taken = pool.length
const randomByte = (): number => {
  if (taken === pool.length) {
    randomFillSync(pool)
    taken = 0
  }
  return pool[taken++]!
}

const base62 = (length: number): string => {
  // rejection sampling keeps every character uniform: 248 = 62 * 4
  let out = ""
  while (out.length < length) {
    const byte = randomByte()
    if (byte < 248) out += alphabet[byte % 62]
  }
  return out
}

export const layerLive = Layer.succeed(IdGenerator, {
  make: (prefix) => Effect.sync(() => `${prefix}_${base62(24)}`),
  secret: (length) => Effect.sync(() => base62(length)),
  uuid: Effect.sync(() => randomUUID())
})

/** Sequential ids (`agt_test0000000000000001`), still unique and well-formed. */
export const layerTest = Layer.sync(IdGenerator, () => {
  let n = 0
  const next = () => String(++n).padStart(16, "0")
  return {
    make: (prefix) => Effect.sync(() => `${prefix}_test${next()}`),
    secret: (length) => Effect.sync(() => `test${next()}`.padEnd(length, "x")),
    uuid: Effect.sync(() => `00000000-0000-4000-8000-${next().slice(-12)}`)
  }
})

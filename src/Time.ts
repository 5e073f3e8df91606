/** All time comes from Effect's Clock, so TestClock drives TTLs, leases and retries. */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const iso = (d: Date | string): string => (typeof d === "string" ? new Date(d) : d).toISOString()

export const isoOrNull = (d: Date | null): string | null => (d === null ? null : iso(d))

export const unixSeconds = (d: Date): number => Math.floor(d.getTime() / 1000)

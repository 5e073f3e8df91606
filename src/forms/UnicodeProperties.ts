/**
 * The code points of a Unicode property escape (`\p{L}`, `\p{Letter}`, `\p{sc=Grek}`, `\p{Script_Extensions=Latin}`,
 * `\p{Alphabetic}`), read from the tables of `regenerate-unicode-properties` (Babel's, the Unicode version Node 20's
 * engine matches), so a pattern means on the server what `new RegExp(…, "v")` gives it. Asking the engine for every
 * code point's answer instead held the main thread for a large fraction of a second per property, and any workspace
 * could name hundreds of them. Each table is a module of code points (`regenerate(…)` of single ones, then
 * `.addRange(from, to)`); its text is read for them rather than run, since building regenerate's set costs far more
 * than the numbers.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import matchProperty from "unicode-match-property-ecmascript"
import matchPropertyValue from "unicode-match-property-value-ecmascript"

/** Inclusive `[from, to]` code point ranges, sorted, disjoint. */
export type PropertyRanges = ReadonlyArray<readonly [number, number]>

// left out of the bundle (scripts/build.ts): its tables are loaded one by one as patterns name them
const load = createRequire(import.meta.url)
const tables = "regenerate-unicode-properties"
const available = load(tables) as ReadonlyMap<string, ReadonlyArray<string>>

/** `Script`, `Greek` for `sc=Grek`; `Binary_Property`, `Alphabetic` for `Alpha`; undefined for an unknown name. */
const canonical = (name: string): readonly [folder: string, value: string] | undefined => {
  const attempt = <A>(f: () => A): A | undefined => {
    try {
      return f()
    } catch {
      return undefined
    }
  }
  const equals = name.indexOf("=")
  const found: readonly [string, string] | undefined =
    equals >= 0
      ? attempt(() => {
          const property = matchProperty(name.slice(0, equals))
          return [property, matchPropertyValue(property, name.slice(equals + 1))] as const
        })
      : (attempt(() => ["General_Category", matchPropertyValue("General_Category", name)] as const) ??
        attempt(() => ["Binary_Property", matchProperty(name)] as const))
  // the folder and file names come from the package's own index, never from the pattern's text
  return found !== undefined && available.get(found[0])?.includes(found[1]) === true ? found : undefined
}

/** The sorted, merged ranges a table's text names: the arguments of `regenerate(…)` and of each `.addRange(…)`. */
const codePointsOf = (source: string): PropertyRanges => {
  const numbers = (text: string) => (text.match(/0x[0-9A-F]+/g) ?? []).map(Number)
  const opened = source.indexOf("require('regenerate')(")
  if (opened < 0) throw new Error("regenerate-unicode-properties: a table is not in the form this reader knows")
  const start = opened + "require('regenerate')(".length
  const ranges: Array<[number, number]> = numbers(source.slice(start, source.indexOf(")", start))).map((c) => [c, c])
  for (const m of source.matchAll(/addRange\((0x[0-9A-F]+), (0x[0-9A-F]+)\)/g)) ranges.push([Number(m[1]), Number(m[2])])
  ranges.sort((a, b) => a[0] - b[0])
  const merged: Array<[number, number]> = []
  for (const [from, to] of ranges) {
    const last = merged[merged.length - 1]
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to)
    else merged.push([from, to])
  }
  return merged
}

/** A `v` pattern matches code points, never a lone surrogate. */
const withoutSurrogates = (ranges: PropertyRanges): PropertyRanges =>
  ranges.flatMap(([from, to]): Array<readonly [number, number]> =>
    to < 0xd800 || from > 0xdfff
      ? [[from, to]]
      : [...(from < 0xd800 ? [[from, 0xd7ff] as const] : []), ...(to > 0xdfff ? [[0xe000, to] as const] : [])]
  )

const cache = new Map<string, PropertyRanges>()

/**
 * The code points of `\p{name}`, without the lone surrogates (a `v` pattern matches code points), or undefined when
 * the tables have no such property (a property of strings, or a name this engine knows and the tables do not).
 */
export const propertyRanges = (name: string): PropertyRanges | undefined => {
  const found = canonical(name)
  if (found === undefined) return undefined
  const key = found.join("/")
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  const ranges = withoutSurrogates(codePointsOf(readFileSync(load.resolve(`${tables}/${key}.js`), "utf8")))
  cache.set(key, ranges)
  return ranges
}

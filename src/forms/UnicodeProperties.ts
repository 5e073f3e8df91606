/**
 * The code points of a Unicode property escape (`\p{L}`, `\p{Letter}`, `\p{sc=Grek}`, `\p{Script_Extensions=Latin}`,
 * `\p{Alphabetic}`), read from the tables of `regenerate-unicode-properties` (Babel's, the Unicode version Node 20's
 * engine matches), so a pattern means on the server what `new RegExp(…, "v")` gives it. One property is one small
 * module loaded once; asking the engine for every code point's answer instead held the main thread for a large
 * fraction of a second per property, and any workspace could name hundreds of them.
 */
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
  // regenerate keeps a set as [start, end + 1, start, end + 1, …]
  const data = (load(`${tables}/${key}.js`) as { characters: { data: ReadonlyArray<number> } }).characters.data
  const ranges: Array<readonly [number, number]> = []
  for (let i = 0; i < data.length; i += 2) {
    const from = data[i]!
    const to = data[i + 1]! - 1
    if (to < 0xd800 || from > 0xdfff) ranges.push([from, to])
    else {
      if (from < 0xd800) ranges.push([from, 0xd7ff])
      if (to > 0xdfff) ranges.push([0xe000, to])
    }
  }
  cache.set(key, ranges)
  return ranges
}

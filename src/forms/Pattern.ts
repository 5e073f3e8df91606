/**
 * A form field's `pattern`: JavaScript regular-expression syntax with flag `v`
 * (what the `<service-form>` component runs in the browser), matched by RE2
 * (`re2js`), whose time is linear in the value: a workspace's pattern cannot
 * hold the process that serves every workspace. The pattern is translated into
 * RE2's syntax with the same meaning: every character class, escape and
 * Unicode property becomes the explicit code points JavaScript gives it.
 * What RE2 cannot run (lookaround, back-references, strings in classes) is
 * refused, and so is a program too large to match a long value quickly.
 */
import { RE2JS } from "re2js"
import { propertyRanges } from "./UnicodeProperties.js"

/**
 * The most instructions one pattern's program may have, and a form's patterns
 * together: a linear engine's worst case is program size × value length, and a
 * submission runs every pattern of its form.
 */
export const maxProgramSize = 250
export const maxFormProgramSize = 1_000

export interface CompiledPattern {
  /** Whether the whole value matches. */
  readonly test: (value: string) => boolean
  /** RE2's instruction count of the program, the measure of its cost. */
  readonly size: number
}

/** Patterns compiled lately: a submission runs its form's patterns, and a class of a Unicode property is long to compile. */
const compiledCache = new Map<string, CompiledPattern | { readonly error: string }>()
const compiledCacheSize = 256

/** The compiled whole-value matcher of a pattern, or why it is refused. */
export const compilePattern = (pattern: string): CompiledPattern | { readonly error: string } => {
  const cached = compiledCache.get(pattern)
  if (cached !== undefined) return cached
  const compiled = compileAnew(pattern)
  // the oldest entry leaves first (a Map keeps insertion order)
  if (compiledCache.size >= compiledCacheSize) compiledCache.delete(compiledCache.keys().next().value!)
  compiledCache.set(pattern, compiled)
  return compiled
}

const compileAnew = (pattern: string): CompiledPattern | { readonly error: string } => {
  try {
    // the language is JavaScript's with flag `v`: what the browser component compiles
    new RegExp(pattern, "v")
  } catch (e) {
    return { error: `not a valid regular expression: ${e instanceof Error ? e.message : String(e)}` }
  }
  let translated: string
  try {
    translated = new Translator(pattern).translate()
  } catch (e) {
    if (e instanceof Unsupported) return { error: e.message }
    throw e
  }
  let re2: RE2JS
  try {
    re2 = RE2JS.compile(translated)
  } catch (e) {
    const message = e instanceof Error ? e.message.replace(/^error parsing regexp: /, "") : String(e)
    return { error: `not supported by the linear-time engine: ${message}` }
  }
  const size = re2.programSize()
  if (size > maxProgramSize) {
    return {
      error: `too complex: it compiles to ${size} instructions, at most ${maxProgramSize} (repetition counts multiply a pattern: \`\\p{L}{300}\` is over 300; use max_length for lengths)`
    }
  }
  return { test: (value) => re2.testExact(value), size }
}

class Unsupported extends Error {}

// Sets of code points: sorted, disjoint, non-adjacent [from, to] pairs.

type Ranges = ReadonlyArray<readonly [number, number]>
const maxCodePoint = 0x10ffff

const normalize = (ranges: ReadonlyArray<readonly [number, number]>): Ranges => {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0])
  const out: Array<[number, number]> = []
  for (const [from, to] of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to)
    else out.push([from, to])
  }
  return out
}
const union = (a: Ranges, b: Ranges): Ranges => normalize([...a, ...b])
const complement = (a: Ranges): Ranges => {
  const out: Array<[number, number]> = []
  let next = 0
  for (const [from, to] of a) {
    if (from > next) out.push([next, from - 1])
    next = to + 1
  }
  if (next <= maxCodePoint) out.push([next, maxCodePoint])
  return out
}
const intersect = (a: Ranges, b: Ranges): Ranges => complement(union(complement(a), complement(b)))
const subtract = (a: Ranges, b: Ranges): Ranges => intersect(a, complement(b))
const single = (c: number): Ranges => [[c, c]]

const hex = (c: number) => `\\x{${c.toString(16)}}`
const classText = (ranges: Ranges): string =>
  ranges.length === 0
    ? `[^\\x{0}-\\x{10ffff}]`
    : `[${ranges.map(([from, to]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`)).join("")}]`

const digits: Ranges = [[0x30, 0x39]]
const word: Ranges = normalize([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]])
/** `.` without flag `s`: every code point but the line terminators. */
const dot: Ranges = complement(normalize([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]))

/** Distinct Unicode properties one pattern may name: each is a table merged into the pattern's classes. */
export const maxPropertiesPerPattern = 4

/** Whether flag `u` knows the property: properties of strings (`\p{RGI_Emoji}`) exist in flag `v` only. */
const isPropertyOfCodePoints = (name: string): boolean => {
  try {
    new RegExp(`\\p{${name}}`, "u")
    return true
  } catch {
    return false
  }
}

/** `\s`: JavaScript's white space and line terminators. */
const space: Ranges = normalize([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]
])

/**
 * A recursive-descent reading of a pattern that `new RegExp(pattern, "v")`
 * accepted (so it is well formed), written out in RE2 syntax: literals and
 * classes as explicit code points, groups as non-capturing groups.
 */
class Translator {
  private i = 0
  private readonly properties = new Set<string>()
  constructor(private readonly src: string) {}

  translate(): string {
    const out = this.disjunction()
    if (this.i < this.src.length) throw new Unsupported(`unexpected \`${this.src[this.i]}\``)
    return out
  }

  private peek(offset = 0): string | undefined {
    return this.src[this.i + offset]
  }
  private eat(text: string): boolean {
    if (!this.src.startsWith(text, this.i)) return false
    this.i += text.length
    return true
  }
  private codePoint(): number {
    const c = this.src.codePointAt(this.i)!
    this.i += c > 0xffff ? 2 : 1
    return c
  }

  private disjunction(): string {
    const alternatives = [this.alternative()]
    while (this.eat("|")) alternatives.push(this.alternative())
    return alternatives.join("|")
  }

  private alternative(): string {
    let out = ""
    while (this.i < this.src.length && this.peek() !== "|" && this.peek() !== ")") {
      const atom = this.term()
      out += atom + this.quantifier()
    }
    return out
  }

  private quantifier(): string {
    const start = this.i
    const c = this.peek()
    if (c === "*" || c === "+" || c === "?") this.i++
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))
      if (m === null) return ""
      this.i += m[0].length
    } else return ""
    this.eat("?")
    return this.src.slice(start, this.i)
  }

  private term(): string {
    const c = this.peek()!
    if (c === "^" || c === "$") {
      this.i++
      return c
    }
    if (c === "(") return this.group()
    if (c === ".") {
      this.i++
      return classText(dot)
    }
    if (c === "[") {
      this.i++
      return classText(this.classBody())
    }
    if (c === "\\") {
      const next = this.peek(1)
      if (next === "b" || next === "B") {
        this.i += 2
        return `\\${next}`
      }
      this.i++
      return classText(this.atomEscape())
    }
    return classText(single(this.codePoint()))
  }

  private group(): string {
    if (this.eat("(?=") || this.eat("(?!") || this.eat("(?<=") || this.eat("(?<!")) {
      throw new Unsupported("lookahead and lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`) are not supported")
    }
    if (this.eat("(?<")) {
      const end = this.src.indexOf(">", this.i)
      this.i = end + 1
    } else if (!this.eat("(?:")) {
      if (this.peek(1) === "?") throw new Unsupported("group modifiers such as `(?i:` are not supported")
      this.i++
    }
    const inner = this.disjunction()
    this.eat(")")
    return `(?:${inner})`
  }

  /** After `\` outside a class: the code points it stands for. */
  private atomEscape(): Ranges {
    const c = this.peek()!
    if (/[1-9]/.test(c) || this.src.startsWith("k<", this.i)) {
      throw new Unsupported("back-references (`\\1`, `\\k<name>`) are not supported")
    }
    return this.classEscape() ?? single(this.characterEscape())
  }

  /** `\d`, `\s`, `\p{…}` and their negations, after the `\`; undefined when it is not one. */
  private classEscape(): Ranges | undefined {
    const c = this.peek()!
    const plain: Record<string, () => Ranges> = {
      d: () => digits,
      D: () => complement(digits),
      w: () => word,
      W: () => complement(word),
      s: () => space,
      S: () => complement(space)
    }
    const known = plain[c]
    if (known !== undefined) {
      this.i++
      return known()
    }
    if ((c === "p" || c === "P") && this.peek(1) === "{") {
      const end = this.src.indexOf("}", this.i)
      const name = this.src.slice(this.i + 2, end)
      this.i = end + 1
      const ranges = propertyRanges(name)
      if (ranges === undefined) {
        throw new Unsupported(
          isPropertyOfCodePoints(name)
            ? `\\p{${name}} is not in the service's Unicode tables`
            : `\\p{${name}} is a property of strings, which is not supported`
        )
      }
      this.properties.add(name)
      if (this.properties.size > maxPropertiesPerPattern) {
        throw new Unsupported(`at most ${maxPropertiesPerPattern} different Unicode properties (\\p{…}) in one pattern`)
      }
      return c === "p" ? ranges : complement(ranges)
    }
    return undefined
  }

  /** A character escape after the `\` (`\n`, `\x41`, `\u{1F600}`, `\.`): its code point. */
  private characterEscape(): number {
    const c = this.peek()!
    const controls: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b, "0": 0 }
    if (c in controls) {
      this.i++
      return controls[c]!
    }
    if (c === "c") {
      this.i += 2
      return this.src.charCodeAt(this.i - 1) % 32
    }
    if (c === "x") {
      this.i += 3
      return parseInt(this.src.slice(this.i - 2, this.i), 16)
    }
    if (c === "u") {
      if (this.peek(1) === "{") {
        const end = this.src.indexOf("}", this.i)
        const value = parseInt(this.src.slice(this.i + 2, end), 16)
        this.i = end + 1
        return value
      }
      const unit = parseInt(this.src.slice(this.i + 1, this.i + 5), 16)
      this.i += 5
      // a surrogate pair written as two escapes is one code point
      const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(this.src.slice(this.i))
      if (unit >= 0xd800 && unit <= 0xdbff && low !== null) {
        this.i += 6
        return 0x10000 + (unit - 0xd800) * 0x400 + (parseInt(low[1]!, 16) - 0xdc00)
      }
      return unit
    }
    // an identity escape: the character itself
    return this.codePoint()
  }

  /** After `[`: the class up to and with its `]`, as code points (flag `v`: nested classes, `&&`, `--`, `\q{…}`). */
  private classBody(): Ranges {
    const negated = this.eat("^")
    let set: Ranges = []
    if (this.peek() !== "]") {
      const first = this.classOperand(true)
      if (this.src.startsWith("&&", this.i)) {
        set = first
        while (this.eat("&&")) set = intersect(set, this.classOperand(false))
      } else if (this.src.startsWith("--", this.i)) {
        set = first
        while (this.eat("--")) set = subtract(set, this.classOperand(false))
      } else {
        set = first
        while (this.peek() !== "]") set = union(set, this.classOperand(true))
      }
    }
    this.eat("]")
    return negated ? complement(set) : set
  }

  /** One operand of a class: a nested class, a class escape, `\q{…}`, a character or (in a union) a range. */
  private classOperand(rangeAllowed: boolean): Ranges {
    if (this.eat("[")) return this.classBody()
    if (this.peek() === "\\") {
      this.i++
      if (this.eat("q{")) return this.stringDisjunction()
      const escaped = this.classEscape()
      if (escaped !== undefined) return escaped
      this.i--
    }
    const from = this.classCharacter()
    if (rangeAllowed && this.peek() === "-" && this.peek(1) !== "-") {
      this.i++
      return [[from, this.classCharacter()]]
    }
    return single(from)
  }

  private classCharacter(): number {
    if (!this.eat("\\")) return this.codePoint()
    if (this.eat("b")) return 0x08
    return this.characterEscape()
  }

  /** After `\q{`: alternatives of one code point each are a set; longer strings RE2 cannot put in a class. */
  private stringDisjunction(): Ranges {
    const points: Array<[number, number]> = []
    let length = 0
    const end = () => {
      if (length !== 1) throw new Unsupported("strings in a class (`\\q{abc}`) are not supported; use an alternation `(abc|…)`")
      length = 0
    }
    while (!this.eat("}")) {
      if (this.eat("|")) {
        end()
        continue
      }
      const c = this.classCharacter()
      points.push([c, c])
      length++
    }
    end()
    return normalize(points)
  }
}

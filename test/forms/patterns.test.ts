/**
 * Field patterns through the real server: JavaScript syntax with flag `v`,
 * matched by the linear-time engine. Hostile spellings of catastrophic
 * backtracking are accepted and answered with the right verdict on a hostile
 * value (short, and as long as a pattern ever runs on); what the engine cannot
 * run is refused at write time naming the field; ordinary patterns keep the
 * meaning JavaScript (and so the browser component) gives them.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { maxPatternInput } from "../../schema/Forms.js"
import { compilePattern } from "../../src/forms/Pattern.js"
import { propertyRanges } from "../../src/forms/UnicodeProperties.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { contactForm, createAgent, goodFields, submit } from "./support.js"

const formatError = "The value does not have the expected format"

const textField = (id: string, pattern: string) => ({ id, type: "text", label: { en: id }, pattern })

/** A contact form with extra pattern fields; its id. */
const formWith = (h: HarnessShape, secret: string, fields: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function* () {
    const base = contactForm(yield* createAgent(h, secret))
    return yield* h.call("POST", "/v1/forms", { key: secret, body: { ...base, fields: [...base.fields, ...fields] } })
  })

const hostile: ReadonlyArray<readonly [id: string, pattern: string, matching: string]> = [
  ["nested_groups", "((a)+)+", "aaaa"],
  ["non_capturing", "(?:a+)+", "aaaa"],
  ["same_twice", "(a|a)*", "aaaa"],
  ["overlapping", "(a|aa)*b", "aaab"],
  ["chain", `${"a*".repeat(30)}b`, "aaab"],
  ["words", "(\\w+\\s?)*$", "many words here"]
]

layer(testServer({ secretKey: Redacted.make("forms-test-secret-key") }))("form field patterns", (it) => {
  it.effect("hostile patterns are accepted and give the right verdict on hostile values, short and at the longest", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = yield* formWith(h, ws.secretTest, hostile.map(([id, pattern]) => textField(id, pattern)))
      expect(created.status, created.text).toBe(201)
      const formId = created.body.data.id as string

      const shortValue = `${"a".repeat(28)}!`
      const longValue = `${"a".repeat(maxPatternInput - 1)}!`
      for (const value of [shortValue, longValue]) {
        const reply = yield* submit(h, formId, ws.formsTest, {
          fields: { ...goodFields, ...Object.fromEntries(hostile.map(([id]) => [id, value])) }
        })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.error.code).toBe("validation_failed")
        expect(reply.body.error.field_errors).toEqual(hostile.map(([id]) => ({ field: id, message: formatError })))
      }
      const matching = yield* submit(h, formId, ws.formsTest, {
        fields: { ...goodFields, ...Object.fromEntries(hostile.map(([id, , value]) => [id, value])) }
      })
      expect(matching.status, matching.text).toBe(201)
      // the longest value a pattern runs on, matching
      const longMatch = yield* submit(h, formId, ws.formsTest, {
        fields: { ...goodFields, same_twice: "a".repeat(maxPatternInput), overlapping: `${"a".repeat(maxPatternInput - 1)}b` }
      })
      expect(longMatch.status, longMatch.text).toBe(201)
    })
  )

  it.effect("refuses at write time what the linear engine cannot run, naming the field and why", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const cases: ReadonlyArray<readonly [pattern: string, message: RegExp]> = [
        ["(?=a)a", /lookahead and lookbehind/],
        ["(?!b)a", /lookahead and lookbehind/],
        ["(?<=a)b", /lookahead and lookbehind/],
        ["(?<!a)b", /lookahead and lookbehind/],
        ["(a)\\1", /back-references/],
        ["(?<x>a)\\k<x>", /back-references/],
        ["[\\q{abc|d}]", /strings in a class/],
        ["\\p{RGI_Emoji}", /property of strings/],
        ["\\p{L}{300}", /too complex: it compiles to \d+ instructions, at most 250/],
        ["\\p{Lu}\\p{Ll}\\p{Lt}\\p{Lm}\\p{Lo}", /at most 4 different Unicode properties/],
        ["(unclosed", /not a valid regular expression/],
        // RE2 spellings that are not JavaScript's: the language is JavaScript's (flag `v`)
        ["\\pL+", /not a valid regular expression/],
        ["(?i)abc", /not a valid regular expression/],
        ["[(]", /not a valid regular expression/]
      ]
      for (const [pattern, message] of cases) {
        const reply = yield* formWith(h, ws.secretTest, [textField("code", pattern)])
        expect(reply.status, `${pattern}: ${reply.text}`).toBe(400)
        expect(reply.body.error.code).toBe("parameter_invalid")
        expect(reply.body.error.param).toBe("fields[8].pattern")
        expect(reply.body.error.message, pattern).toMatch(message)
      }
      // each pattern is small enough, the form's together are not: the one that goes over is named
      const many = yield* formWith(h, ws.secretTest, Array.from({ length: 5 }, (_, i) => textField(`code${i}`, "[a-z]{240}")))
      expect(many.status, many.text).toBe(400)
      expect(many.body.error.param).toBe("fields[12].pattern")
      expect(many.body.error.message).toMatch(/together compile to more than 1000 instructions/)
    })
  )

  it.effect("ordinary patterns match and refuse as JavaScript (flag v) does, through submit", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const fields: ReadonlyArray<readonly [id: string, pattern: string, good: string, bad: string]> = [
        ["work_email", "[^\\s@]+@[^\\s@]+\\.[^\\s@]+", "ana.lopez@example.com", "ana.lopez.example.com"],
        ["phone", "\\+?[0-9][0-9 \\(\\)\\.\\-]{6,19}", "+34 (912) 345-678", "call me maybe"],
        ["zip", "[0-9]{5}(-[0-9]{4})?", "94105-1234", "9410"],
        // Unicode sets: two letters that are not a-z, as flag `v` reads it
        ["code", "[\\p{L}--[a-z]]{2}-\\d{3}", "ÉÑ-123", "ab-123"],
        // JavaScript's `\s` has the no-break space; RE2's would not
        ["spaced", "a\\sb", "a\u00a0b", "a_b"],
        // alternation is of the whole value, not of its ends
        ["either", "yes|no", "no", "nope"]
      ]
      const created = yield* formWith(h, ws.secretTest, fields.map(([id, pattern]) => textField(id, pattern)))
      expect(created.status, created.text).toBe(201)
      const formId = created.body.data.id as string
      const good = yield* submit(h, formId, ws.formsTest, {
        fields: { ...goodFields, ...Object.fromEntries(fields.map(([id, , value]) => [id, value])) }
      })
      expect(good.status, good.text).toBe(201)
      const bad = yield* submit(h, formId, ws.formsTest, {
        fields: { ...goodFields, ...Object.fromEntries(fields.map(([id, , , value]) => [id, value])) }
      })
      expect(bad.status, bad.text).toBe(400)
      expect(bad.body.error.field_errors).toEqual(fields.map(([id]) => ({ field: id, message: formatError })))
    })
  )

  it.effect("a form saved with a pattern the engine refuses (a lookahead, before it) still takes submissions", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = yield* formWith(h, ws.secretTest, [textField("code", "a+")])
      expect(created.status, created.text).toBe(201)
      const formId = created.body.data.id as string
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ definition: any }>`select definition from forms where id = ${formId}`.pipe(Effect.orDie)
      const definition = typeof row!.definition === "string" ? JSON.parse(row!.definition) : row!.definition
      definition.fields = definition.fields.map((f: any) => (f.id === "code" ? { ...f, pattern: "(?=a)a+" } : f))
      yield* sql`update forms set definition = ${JSON.stringify(definition)}::jsonb where id = ${formId}`.pipe(Effect.orDie)
      const reply = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, code: "bbb" } })
      expect(reply.status, reply.text).toBe(201)
    })
  )
})

describe("compilePattern", () => {
  it("gives every pattern it accepts the verdicts of RegExp with flag v", () => {
    const patterns = [
      "ORD-[0-9]{4}", "[\\p{L}--[a-z]]{2}-\\d{3}", "[^\\s@]+@[^\\s@]+\\.[^\\s@]+", "\\s+", "\\S+", ".+", "[^a]", "[]", "[^]",
      "a|b|", "(a)(?<n>b)?", "\\bfoo\\b.*", "[\\w&&[^_]]+", "[\\d--[5]]+", "[[a-c][x-z]]+", "\\u{1F600}|\\uD83D\\uDE00x",
      "\\x41\\u0042\\cJ\\0", "[\\q{a|b}c]+", "\\p{Script=Greek}+", "\\P{L}", "[\\p{Lu}\\p{N}]", "[\\-\\]\\\\]+", "\\.\\*\\/",
      "x{2,3}?y*?", "[\\b]", "^a$|^b$", "\\W\\D", "[^\\p{L}]", "(?:a+)+", "(a|aa)*b", "(\\w+\\s?)*$"
    ]
    const values = [
      "ORD-1234", "ÉÑ-123", "ab-123", "a@b.c", "a b", " \u00a0\u2028", "\r", "\n", "x", "a", "b", "", "ab", "foo bar", "abc",
      "5", "1234", "aaxyz", "\u{1F600}", "\u{1F600}x", "AB\n\u0000", "ΑΒΓ", "Ω1", "-]\\", ".*/", "xxxy", "xxy", "\b", "é", "@#",
      "aaab", "aab", "many words here"
    ]
    for (const pattern of patterns) {
      const compiled = compilePattern(pattern)
      if ("error" in compiled) throw new Error(`${pattern} refused: ${compiled.error}`)
      const js = new RegExp(`^(?:${pattern})$`, "v")
      for (const value of values) expect(compiled.test(value), `${pattern} on ${JSON.stringify(value)}`).toBe(js.test(value))
    }
  })
})

describe("propertyRanges", () => {
  /** The engine's own answer for `\p{name}`: its runs over every code point but the lone surrogates. */
  const engineRanges = (name: string): Array<readonly [number, number]> => {
    const re = new RegExp(`^\\p{${name}}$`, "v")
    const out: Array<[number, number]> = []
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue
      if (!re.test(String.fromCodePoint(c))) continue
      const last = out[out.length - 1]
      if (last !== undefined && (last[1] === c - 1 || (last[1] === 0xd7ff && c === 0xe000))) last[1] = c
      else out.push([c, c])
    }
    return out
  }
  /** Runs that only the surrogate gap separates are one run to a `v` pattern, which never sees a lone surrogate. */
  const joined = (ranges: ReadonlyArray<readonly [number, number]>) =>
    ranges.reduce<Array<[number, number]>>((out, [from, to]) => {
      const last = out[out.length - 1]
      if (last !== undefined && last[1] === 0xd7ff && from === 0xe000) last[1] = to
      else out.push([from, to])
      return out
    }, [])

  it("gives each property, under any of its names, the code points this engine gives it", () => {
    const names = ["L", "Letter", "gc=Lu", "General_Category=Decimal_Number", "Script=Greek", "sc=Latn", "scx=Deva", "Alphabetic", "Alpha", "White_Space", "Any", "ASCII", "Assigned", "Cn"]
    for (const name of names) {
      const ranges = propertyRanges(name)
      expect(ranges, name).toBeDefined()
      expect(joined(ranges!), name).toEqual(engineRanges(name))
    }
  })

  it("knows no property of strings, nor a name that is not a property", () => {
    expect(propertyRanges("RGI_Emoji")).toBeUndefined()
    expect(propertyRanges("Script=NotAScript")).toBeUndefined()
    expect(propertyRanges("../../../etc/passwd")).toBeUndefined()
    expect(propertyRanges("Bidi_Class=L")).toBeUndefined()
  })
})

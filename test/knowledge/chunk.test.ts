/**
 * The chunker (`src/knowledge/Chunk.ts`): the same chunks as it made before it was a generator (digests of the
 * earlier version's output on these inputs), and `chunkInSteps` the same as `chunk` while it lets timers run
 * between its steps.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { chunk, chunkInSteps, stepUnits } from "../../src/knowledge/Chunk.js"

const digest = (chunks: ReadonlyArray<string>) => createHash("sha256").update(JSON.stringify(chunks)).digest("hex")

const line = Array.from({ length: 40_000 }, (_, i) => `refund${i % 97}`).join(" ")

const known: ReadonlyArray<readonly [string, string, number]> = [
  ["# Hours\n\nOpen nine to five. Closed on Sundays!\n\n## Returns\n\nWithin 30 days?  Yes.\n\n\n  \n\nLast block", "9b18b9eaec1d9945e8f19dd13db952f9c1b99e414a9b771eeef2da6cbbb548db", 2],
  ["word ".repeat(700), "15457e225b91f7dcc02a93393e7c7bcdd9ba5359700c91aaf3c7b03484c6c41e", 3],
  [`${"Long sentence without an end ".repeat(60)}. Short one. ${"x".repeat(2500)}\n\n# Lone heading`, "eb0cd7b43a510447b7157fb22c4f1526c9c57ee46cd092177f8846fd6e64c48b", 6],
  ["\n \n\t\n", "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945", 0],
  ["## H\n\n" + Array.from({ length: 30 }, (_, i) => `Paragraph ${i}. ${"text ".repeat(i * 7)}`).join("\n\n"), "b7c60e9da8439ea179ba84115deeac4fc02515cff7c313a48be9a6b00df34974", 18],
  [line, "51a903c55c854871429104089850622f6dd164a46497e218ea65dd5a2200b64c", 297]
]

describe("chunker", () => {
  it("makes the chunks it made before, on paragraphs, headings, long sentences and one long line", () => {
    for (const [text, expected, count] of known) {
      const chunks = chunk(text)
      expect(chunks.length).toBe(count)
      expect(digest(chunks)).toBe(expected)
    }
  })

  it.live("in steps: the same chunks, with timers run between the steps", () =>
    Effect.gen(function* () {
      for (const [text] of known) expect(yield* chunkInSteps(text)).toEqual(chunk(text))
      // a line of a few thousand pieces: a timer set before it fires before the chunker is done
      const long = Array.from({ length: 400_000 }, (_, i) => `word${i % 89}`).join(" ")
      expect(long.length / 1200).toBeGreaterThan(2 * stepUnits)
      let fired = false
      const timer = setTimeout(() => (fired = true), 0)
      let firedBeforeEnd = false
      const chunks = yield* chunkInSteps(long).pipe(Effect.tap(() => Effect.sync(() => (firedBeforeEnd = fired))))
      clearTimeout(timer)
      expect(chunks).toEqual(chunk(long))
      expect(firedBeforeEnd).toBe(true)
    })
  )
})

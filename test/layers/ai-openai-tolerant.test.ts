/**
 * The `openai` provider takes what a model returns off the asked shape, against a fake OpenAI-compatible server
 * on 127.0.0.1: fewer or more categories than asked, extra fields, JSON in a Markdown fence or among words, a Q&A
 * without a category, items off the shape among good ones. Nothing usable: asked once more with the reason, and
 * the local provider's drafts (with a warning) when the second reply is not usable either.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import * as Ai from "../../layers/Ai.js"
import * as Extract from "../../layers/ai/Extract.js"
import { fakeOpenAi, fakeProvider, unreachableBaseUrl } from "../support/fakeOpenAi.js"

type Fake = Effect.Effect.Success<ReturnType<typeof fakeOpenAi>>


/** The provider on a fresh fake whose model gives `replies` first; `warnings`: what the provider logged as such. */
const withModel = <A, E>(replies: ReadonlyArray<string>, body: (ai: Ai.AiShape, fake: Fake, warnings: Array<string>) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const fake = yield* fakeOpenAi()
    fake.replies.push(...replies)
    const warnings: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message.join(" ") : message))
    })
    return yield* Effect.flatMap(Ai.Ai, (ai) => body(ai, fake, warnings)).pipe(
      Effect.provide(fakeProvider(fake.baseUrl)),
      Effect.provide(Logger.replace(Logger.defaultLogger, capture))
    )
  }).pipe(Effect.scoped)

const doc = {
  title: "Acme delivery",
  text: "Delivery takes two days. Every order travels by courier.\n\nReturns are free within thirty days of delivery."
}
const three = [
  { name: "Shipping", description: "" },
  { name: "Returns", description: "" },
  { name: "Payments", description: "" }
]
const categoriesOf = (names: ReadonlyArray<string>) => JSON.stringify({ categories: names.map((name) => ({ name, description: `About ${name}` })) })
const prose = "Sure! The text is about delivery and returns."

describe("openai provider: what an off-spec model returns", () => {
  it.effect("one category where three are asked for: kept, asked once; so is a lone item for the list", () =>
    withModel([categoriesOf(["Delivery"]), JSON.stringify({ categories: { name: "Couriers" } })], (ai, fake) =>
      Effect.gen(function* () {
        expect(yield* ai.categorize(doc)).toEqual([{ name: "Delivery", description: "About Delivery" }])
        expect(yield* ai.categorize(doc)).toEqual([{ name: "Couriers", description: "" }])
        expect(fake.chats.length).toBe(2)
      })
    ))

  it.effect("five categories are kept; more than eight are cut to the first eight, duplicates dropped", () =>
    withModel(
      [
        categoriesOf(["Shipping", "Returns", "Payments", "Accounts", "Stores"]),
        categoriesOf(["A", "B", "b", "C", "D", "E", "F", "G", "H", "I", "J", "K"])
      ],
      (ai, fake) =>
        Effect.gen(function* () {
          expect((yield* ai.categorize(doc)).map((c) => c.name)).toEqual(["Shipping", "Returns", "Payments", "Accounts", "Stores"])
          expect((yield* ai.categorize(doc)).map((c) => c.name)).toEqual(["A", "B", "C", "D", "E", "F", "G", "H"])
          expect(fake.chats.length).toBe(2)
        })
    ))

  it.effect("extra fields are ignored, a missing or null description is empty", () =>
    withModel(
      [
        JSON.stringify({
          reasoning: "The text covers delivery.",
          categories: [
            { name: "Delivery", description: "How parcels travel", confidence: 0.9, emoji: "📦" },
            { name: "Returns" },
            { name: "Refunds", description: null }
          ]
        }),
        JSON.stringify({ qa: [{ question: "How fast?", answer: "Two days.", category: "Delivery", source: "paragraph 1", score: 3 }] })
      ],
      (ai, fake) =>
        Effect.gen(function* () {
          const categories = yield* ai.categorize(doc)
          expect(categories).toEqual([
            { name: "Delivery", description: "How parcels travel" },
            { name: "Returns", description: "" },
            { name: "Refunds", description: "" }
          ])
          expect(yield* ai.generateQa(doc, categories)).toEqual([{ question: "How fast?", answer: "Two days.", category: "Delivery" }])
          expect(fake.chats.length).toBe(2)
        })
    ))

  it.effect("JSON in a ```json fence, in a bare fence, or among words is read", () =>
    withModel(
      [
        "```json\n" + categoriesOf(["Delivery", "Returns", "Refunds"]) + "\n```",
        "Here you are:\n```\n" + JSON.stringify({ qa: [{ question: "How fast?", answer: "Two days.", category: "Delivery" }] }) + "\n```\nAnything else?",
        `The categories are ${categoriesOf(["Couriers"])} as asked.`
      ],
      (ai, fake) =>
        Effect.gen(function* () {
          const categories = yield* ai.categorize(doc)
          expect(categories.map((c) => c.name)).toEqual(["Delivery", "Returns", "Refunds"])
          expect(yield* ai.generateQa(doc, categories)).toEqual([{ question: "How fast?", answer: "Two days.", category: "Delivery" }])
          expect((yield* ai.categorize(doc)).map((c) => c.name)).toEqual(["Couriers"])
          expect(fake.chats.length).toBe(3)
        })
    ))

  it.effect("a Q&A without a category, or with one the agent lacks, is filed under none; a bare list is read too", () =>
    withModel(
      [
        JSON.stringify({
          qa: [
            { question: "How fast is delivery?", answer: "Two days." },
            { question: "Are returns free?", answer: "Yes, within thirty days.", category: "Made up" },
            { question: "Do you ship by courier?", answer: "Yes.", category: "shipping" }
          ]
        }),
        JSON.stringify([{ question: "Who delivers?", answer: "A courier." }])
      ],
      (ai, fake) =>
        Effect.gen(function* () {
          expect(yield* ai.generateQa(doc, three)).toEqual([
            { question: "How fast is delivery?", answer: "Two days.", category: null },
            { question: "Are returns free?", answer: "Yes, within thirty days.", category: null },
            { question: "Do you ship by courier?", answer: "Yes.", category: "Shipping" }
          ])
          expect(yield* ai.generateQa(doc, three)).toEqual([{ question: "Who delivers?", answer: "A courier.", category: null }])
          expect(fake.chats.length).toBe(2)
        })
    ))

  it.effect("items off the shape are dropped and the rest kept; none kept at all is asked again", () =>
    withModel(
      [
        JSON.stringify({ qa: [{ question: "How fast?", answer: "" }, { question: "Are returns free?", answer: "Yes." }, { q: "x" }] }),
        JSON.stringify({ qa: [{ question: "How fast?" }, { answer: "Two days." }] }),
        JSON.stringify({ qa: [{ question: "How fast?", answer: "Two days." }] })
      ],
      (ai, fake) =>
        Effect.gen(function* () {
          expect(yield* ai.generateQa(doc, three)).toEqual([{ question: "Are returns free?", answer: "Yes.", category: null }])
          expect(yield* ai.generateQa(doc, three)).toEqual([{ question: "How fast?", answer: "Two days.", category: null }])
          expect(fake.chats.length).toBe(3)
          const reAsk = fake.chats[2]!
          expect(reAsk.at(-1)!.content).toContain('no item of "qa" has the fields asked for')
          expect(reAsk.at(-1)!.content).toContain("answer")
        })
    ))

  it.effect("prose, then valid JSON: the re-ask, which carries the first reply and why it was not usable, is used", () =>
    withModel([prose, categoriesOf(["Delivery", "Returns"])], (ai, fake, warnings) =>
      Effect.gen(function* () {
        expect((yield* ai.categorize(doc)).map((c) => c.name)).toEqual(["Delivery", "Returns"])
        expect(fake.chats.length).toBe(2)
        const [first, second] = fake.chats
        expect(second!.slice(0, 2)).toEqual(first)
        expect(second![2]).toEqual({ role: "assistant", content: prose })
        expect(second![3]!.role).toBe("user")
        expect(second![3]!.content).toContain("the reply is not JSON")
        expect(warnings).toEqual([])
      })
    ))

  it.effect("prose twice: the local provider's drafts, with a warning that says why", () =>
    withModel([prose, prose, "", JSON.stringify({ answer: "no list" })], (ai, fake, warnings) =>
      Effect.gen(function* () {
        const categories = yield* ai.categorize(doc)
        expect(categories).toEqual(Extract.categories(doc))
        expect(categories.length).toBeGreaterThanOrEqual(3)
        expect(warnings).toEqual([expect.stringContaining("the model's categories could not be used twice (the reply is not JSON)")])
        // an empty reply, then one without the list: the Q&A are the local drafts too
        const qa = yield* ai.generateQa(doc, categories)
        expect(qa).toEqual(Extract.qa(doc, categories))
        expect(qa.length).toBeGreaterThan(0)
        expect(warnings[1]).toContain("the model's Q&A could not be used twice")
        expect(warnings[1]).toContain('the reply has no "qa" list')
        // two asks a step, no third
        expect(fake.chats.length).toBe(4)
        expect(fake.chats[3]!.at(-1)!.content).toContain("the reply is empty")
        // the next document's model answers as asked
        expect((yield* ai.generateQa(doc, categories)).length).toBe(2)
      })
    ))

  it.effect("an unreachable server fails the step as transient, with a reason a person reads", () =>
    Effect.gen(function* () {
      const baseUrl = yield* unreachableBaseUrl
      const result = yield* Effect.flatMap(Ai.Ai, (ai) => Effect.either(ai.categorize(doc))).pipe(Effect.provide(fakeProvider(baseUrl)))
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left).toMatchObject({ _tag: "AiError", transient: true })
        expect(result.left.message).toBe("chat request failed: the server could not be reached (ECONNREFUSED)")
      }
    }).pipe(Effect.scoped))
})

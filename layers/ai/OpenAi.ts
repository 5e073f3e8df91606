/**
 * The `openai` provider's pieces: prompts, the JSON shapes the model is asked
 * for, and how failures of an OpenAI-compatible server map to `transient`.
 */
import * as AiErrors from "@effect/ai/AiError"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { LanguageTag } from "../../schema/Languages.js"
import type { CategoryDraft, QaDraft } from "./Shape.js"

export const categoriesPrompt = [
  "You organise the knowledge base of a customer-facing assistant.",
  "Read the document and propose between 3 and 8 categories that together cover its topics.",
  'Reply with JSON only, exactly of this shape: {"categories":[{"name":"...","description":"..."}]}.',
  "Names are short (1 to 4 words); descriptions are one sentence. Write in the language of the document."
].join("\n")

export const qaPrompt = (categories: ReadonlyArray<string>) =>
  [
    "You write question-and-answer pairs for the knowledge base of a customer-facing assistant.",
    "Draw every pair only from the document: questions a customer would ask, answers stated in the document.",
    'Reply with JSON only, exactly of this shape: {"qa":[{"question":"...","answer":"...","category":"..."}]}.',
    `"category" is one of these names, written exactly, or null when none fits: ${JSON.stringify(categories)}.`,
    "Write in the language of the document."
  ].join("\n")

/** What to say when a reply could not be used, asking once more. */
export const reAsk = (why: string) =>
  `That reply could not be used: ${why}. Reply again with JSON only, exactly of the shape asked for.`

const Text = Schema.String.pipe(Schema.compose(Schema.Trim), Schema.nonEmptyString())

/** Fields beyond these are ignored (Schema's default); a missing or null description is empty. */
const CategoryItem = Schema.Struct({
  name: Text,
  description: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})

/** A missing or null category: none fits. */
const QaItem = Schema.Struct({
  question: Text,
  answer: Text,
  category: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson())

/**
 * The JSON of a model's reply: the reply itself, the inside of a Markdown fence, or the span from the first
 * bracket to the last (JSON with words around it). Undefined: none of them parses.
 */
const jsonOf = (content: string): unknown => {
  const text = (/```[a-z]*\s*([\s\S]*?)```/i.exec(content)?.[1] ?? content).trim()
  const start = text.search(/[[{]/)
  const end = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"))
  for (const candidate of [text, start >= 0 && end > start ? text.slice(start, end + 1) : undefined]) {
    if (candidate === undefined) continue
    const parsed = decodeJson(candidate)
    if (Either.isRight(parsed)) return parsed.right
  }
  return undefined
}

/**
 * The items of the list a reply was asked for, under `key` or as the reply itself, each decoded on its own: those
 * off the asked shape are dropped, the rest kept. Left: why nothing is usable (said back to the model on a re-ask).
 */
const itemsOf = <A, I>(content: string, key: string, item: Schema.Schema<A, I>): Either.Either<Array<A>, string> => {
  if (content.trim() === "") return Either.left("the reply is empty")
  const json = jsonOf(content)
  if (json === undefined) return Either.left("the reply is not JSON")
  const under = Predicate.isRecord(json) ? json[key] : undefined
  // the list itself, or one item where a list of one was asked for
  const list = Array.isArray(json) ? json : Array.isArray(under) ? under : Predicate.isRecord(under) ? [under] : undefined
  if (list === undefined) return Either.left(`the reply has no "${key}" list`)
  const decode = Schema.decodeUnknownEither(item)
  const decoded = list.map((value) => decode(value))
  const kept = decoded.flatMap((d) => (Either.isRight(d) ? [d.right] : []))
  const firstError = decoded.find(Either.isLeft)
  if (kept.length === 0 && firstError !== undefined) {
    const why = ParseResult.TreeFormatter.formatErrorSync(firstError.left).replace(/\s+/g, " ").slice(0, 300)
    return Either.left(`no item of "${key}" has the fields asked for (${why})`)
  }
  return Either.right(kept)
}

/** 1..8 categories, named once each (case aside); fewer than asked is the model's fair answer for a short text. */
export const readCategories = (content: string): Either.Either<Array<CategoryDraft>, string> =>
  Either.flatMap(itemsOf(content, "categories", CategoryItem), (items) => {
    const out: Array<CategoryDraft> = []
    for (const c of items) {
      const name = c.name.slice(0, 80)
      if (out.length < 8 && !out.some((k) => k.name.toLowerCase() === name.toLowerCase())) {
        out.push({ name, description: (c.description ?? "").trim() })
      }
    }
    return out.length === 0 ? Either.left("the reply proposes no category") : Either.right(out)
  })

/** The Q&A of a reply, each in one of `names` (case aside) or none: a name the model made up is no category. */
export const readQa = (content: string, names: ReadonlyArray<string>): Either.Either<Array<QaDraft>, string> => {
  const byKey = new Map(names.map((name) => [name.trim().toLowerCase(), name]))
  return Either.map(itemsOf(content, "qa", QaItem), (items) =>
    items.map((qa) => ({
      question: qa.question,
      answer: qa.answer,
      category: qa.category === null ? null : (byKey.get(qa.category.trim().toLowerCase()) ?? null)
    }))
  )
}

/** The part of a chat completion this provider reads; servers differ in the rest. */
export const ChatCompletion = Schema.Struct({
  choices: Schema.NonEmptyArray(
    Schema.Struct({ message: Schema.Struct({ content: Schema.NullOr(Schema.String) }) })
  )
})

/** The system's code of a failed connection (ECONNREFUSED, ENOTFOUND), somewhere down an error's causes. */
const codeOf = (cause: unknown, depth = 0): string | undefined => {
  if (depth > 3 || typeof cause !== "object" || cause === null) return undefined
  const { cause: inner, code } = cause as { readonly code?: unknown; readonly cause?: unknown }
  return typeof code === "string" ? code : codeOf(inner, depth + 1)
}

/** A request that got no answer, as a person reads it. Transient: another attempt may reach the server; a bad URL will not. */
export const requestFailed = (what: string, error: HttpClientError.HttpClientError) => {
  const transient = error._tag === "RequestError" && error.reason === "Transport"
  const code = codeOf(error.cause)
  const why = transient ? "the server could not be reached" : error.reason
  return { message: `${what} failed: ${why}${code === undefined ? "" : ` (${code})`}`, transient }
}

export const isTransientStatus = (status: number) => status === 408 || status === 429 || status >= 500

/** What went wrong, for the source's `error`; never the request headers (the key). */
export const describeAiError = (error: AiErrors.AiError): { readonly message: string; readonly transient: boolean } => {
  switch (error._tag) {
    case "HttpResponseError":
      return error.reason === "StatusCode"
        ? {
            message: `embeddings request answered ${error.response.status}${error.body ? `: ${error.body.slice(0, 300)}` : ""}`,
            transient: isTransientStatus(error.response.status)
          }
        : { message: `embeddings response unreadable (${error.reason})`, transient: false }
    case "HttpRequestError":
      // unreachable or a broken connection is worth a retry; a bad URL is not
      return { message: `embeddings request failed (${error.reason})`, transient: error.reason === "Transport" }
    case "MalformedOutput":
      return { message: `embeddings response does not match the API: ${error.description ?? ""}`.trim(), transient: false }
    case "MalformedInput":
      return { message: `embeddings request refused: ${error.description ?? ""}`.trim(), transient: false }
    case "UnknownError":
      return { message: `embeddings failed: ${error.description ?? ""}`.trim(), transient: false }
  }
}

/** Splits long documents at paragraph breaks so each request stays inside a model's context. */
export const pieces = (text: string, max: number, limit: number): Array<string> => {
  const out: Array<string> = []
  let current = ""
  for (const paragraph of text.split(/\n\s*\n/)) {
    const next = current.length === 0 ? paragraph : `${current}\n\n${paragraph}`
    if (next.length <= max) {
      current = next
      continue
    }
    if (current.length > 0) out.push(current)
    current = paragraph.length > max ? paragraph.slice(0, max) : paragraph
    if (out.length >= limit) break
  }
  if (current.length > 0 && out.length < limit) out.push(current)
  return out.length === 0 ? [""] : out
}

/** The part of a streamed chat completion chunk this provider reads. */
export const ChatChunk = Schema.parseJson(
  Schema.Struct({
    choices: Schema.Array(
      Schema.Struct({ delta: Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) }) })
    )
  })
)

const groundingPrompt = [
  "You are a customer-facing assistant. Answer the user's question using only the knowledge below.",
  "If the knowledge does not contain the answer, say so briefly and offer to connect the user with a person.",
  "Answer in the language of the question, in plain text, concisely."
].join("\n")

const languageNames = new Intl.DisplayNames(["en"], { type: "language", fallback: "none" })

const nameOf = (language: LanguageTag | undefined) => (language === undefined ? undefined : languageNames.of(language))

/** "The question is in Spanish: answer in Spanish.", the language named in English (what models read best). */
export const languageLine = (language: LanguageTag | undefined): string => {
  const name = nameOf(language)
  return name === undefined ? "" : `The question is in ${name}: answer in ${name}.`
}

/** A drafting prompt with the document's language named, when it is known. */
export const inDocumentLanguage = (prompt: string, language: LanguageTag | undefined): string => {
  const name = nameOf(language)
  return name === undefined ? prompt : `${prompt}\nThe document is in ${name}: write in ${name}.`
}

/** The chat messages of an answer: instructions and knowledge as the system message, then the conversation. */
export const answerMessages = (input: {
  readonly instructions: string | null
  readonly question: string
  readonly history: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }>
  readonly grounding: ReadonlyArray<{ readonly kind: "qa" | "chunk"; readonly title: string; readonly text: string }>
  readonly expandedQuery?: string | undefined
  readonly language?: LanguageTag | undefined
}): Array<{ readonly role: "system" | "user" | "assistant"; readonly content: string }> => {
  const knowledge = input.grounding
    .map((g, i) => `[${i + 1}] ${g.kind === "qa" ? `Q: ${g.title}\nA: ${g.text}` : `${g.title}\n${g.text}`}`)
    .join("\n\n")
  const system = [
    input.instructions === null || input.instructions.trim() === "" ? "" : `Instructions from the operator:\n${input.instructions.trim()}\n`,
    [groundingPrompt, languageLine(input.language)].filter((line) => line !== "").join("\n"),
    input.expandedQuery !== undefined && input.expandedQuery !== input.question
      ? `Terms of the question with their synonyms: ${input.expandedQuery}`
      : "",
    `Knowledge:\n${knowledge === "" ? "(none)" : knowledge}`
  ]
    .filter((part) => part !== "")
    .join("\n\n")
  return [
    { role: "system", content: system },
    ...input.history.map((m) => ({ role: m.role, content: m.content })),
    { role: "user", content: input.question }
  ]
}

/** `/audio/transcriptions` in `verbose_json` (plain `json` servers send `text` alone). */
export const TranscriptionReply = Schema.Struct({
  text: Schema.String,
  duration: Schema.optional(Schema.Number)
})

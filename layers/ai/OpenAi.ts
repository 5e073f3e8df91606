/**
 * The `openai` provider's pieces: prompts, the JSON shapes the model is asked
 * for, and how failures of an OpenAI-compatible server map to `transient`.
 */
import * as AiErrors from "@effect/ai/AiError"
import * as Schema from "effect/Schema"

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

const Text = Schema.String.pipe(Schema.compose(Schema.Trim), Schema.nonEmptyString())

export const CategoriesReply = Schema.parseJson(
  Schema.Struct({
    categories: Schema.Array(Schema.Struct({ name: Text, description: Schema.optionalWith(Schema.String, { default: () => "" }) }))
  })
)

export const QaReply = Schema.parseJson(
  Schema.Struct({
    qa: Schema.Array(
      Schema.Struct({
        question: Text,
        answer: Text,
        category: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
      })
    )
  })
)

/** The part of a chat completion this provider reads; servers differ in the rest. */
export const ChatCompletion = Schema.Struct({
  choices: Schema.NonEmptyArray(
    Schema.Struct({ message: Schema.Struct({ content: Schema.NullOr(Schema.String) }) })
  )
})

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

/** The chat messages of an answer: instructions and knowledge as the system message, then the conversation. */
export const answerMessages = (input: {
  readonly instructions: string | null
  readonly question: string
  readonly history: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }>
  readonly grounding: ReadonlyArray<{ readonly kind: "qa" | "chunk"; readonly title: string; readonly text: string }>
  readonly expandedQuery?: string | undefined
}): Array<{ readonly role: "system" | "user" | "assistant"; readonly content: string }> => {
  const knowledge = input.grounding
    .map((g, i) => `[${i + 1}] ${g.kind === "qa" ? `Q: ${g.title}\nA: ${g.text}` : `${g.title}\n${g.text}`}`)
    .join("\n\n")
  const system = [
    input.instructions === null || input.instructions.trim() === "" ? "" : `Instructions from the operator:\n${input.instructions.trim()}\n`,
    groundingPrompt,
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

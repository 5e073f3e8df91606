/**
 * How an agent answers a question, apart from any conversation: the glossary read, knowledge retrieved (hits
 * under the relevance threshold dropped), the sources described, and the model's tokens, or the fixed fallback
 * when nothing relevant was found, in the visitor's language (`src/languages/TextLanguage.ts`). A conversation's reply (`Replies.ts`) streams these tokens into its log; an
 * evaluation (`src/evaluations`) takes the whole reply with `answerOnce`, writing no message and counting no
 * usage.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Ai, type AiError, type Grounding, wordTokens } from "../../layers/Ai.js"
import type { MessageOutcome, MessageSource } from "../../schema/Conversations.js"
import { type AgentId, SourceId } from "../../schema/Ids.js"
import type { AgentLanguage } from "../../schema/Languages.js"
import type { Tenant } from "../../schema/Tenant.js"
import { text, type TextLanguage } from "../../schema/texts/Catalogue.js"
import { chooseTextLanguage, questionLanguage } from "../languages/TextLanguage.js"
import { Glossary } from "../glossary/Glossary.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { expandQuery } from "../knowledge/QueryWords.js"
import { type Hit, Retrieval } from "../knowledge/Retrieval.js"
import { LessonSources } from "../training/LessonSources.js"
import { rankForPlan, searchesAlone, searchPlan } from "./FollowUp.js"

/** The fixed answer when nothing relevant was found, in a language of the catalogue (`schema/texts/`). */
export const fallbackAnswerIn = (language: TextLanguage): string => text(language, "answer.fallback")

/** The fallback in English. */
export const fallbackAnswer = fallbackAnswerIn("en")

const isSourceId = Schema.is(SourceId)

/** Hits a reply draws on at most. */
const answerHits = 5

export interface AnswerInput {
  readonly tenant: Tenant
  readonly agentId: AgentId
  readonly question: string
  readonly instructions: string | null
  /** The conversation so far, oldest first (none for a question on its own). */
  readonly history: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }>
  readonly agentLanguage: AgentLanguage
  /** The widget's `locale`, when the question came from the widget and it said one. */
  readonly locale?: string | undefined
}

/** A reply about to be written: its tokens (not yet run), what it draws on, and what it is. */
export interface PreparedAnswer {
  readonly tokens: Stream.Stream<string, AiError>
  readonly sources: ReadonlyArray<MessageSource>
  readonly grounding: ReadonlyArray<Grounding>
  /** `answered` when knowledge was found, else `fallback` (the fixed answer). */
  readonly outcome: Extract<MessageOutcome, "answered" | "fallback">
  /** The visitor's language: the fallback's, and the `escalation` event's that comes with it. */
  readonly language: TextLanguage
}

/** A whole reply. */
export interface Answer {
  readonly content: string
  readonly sources: ReadonlyArray<MessageSource>
  readonly outcome: Extract<MessageOutcome, "answered" | "fallback">
}

export class Answering extends Effect.Service<Answering>()("Conversations/Answering", {
  effect: Effect.gen(function* () {
    const knowledge = yield* Knowledge
    const lessons = yield* LessonSources
    const retrieval = yield* Retrieval
    const glossary = yield* Glossary
    const ai = yield* Ai

    const describe = Effect.fn("Answering.sources")(function* (tenant: Tenant, agentId: AgentId, hits: ReadonlyArray<Hit>) {
      const out: Array<MessageSource> = []
      const titles = new Map<string, string>()
      for (const hit of hits) {
        if (hit.kind === "qa") {
          out.push({ type: "qa", id: hit.id, title: hit.question ?? "", url: null })
          continue
        }
        const sourceId = hit.sourceId
        if (!isSourceId(sourceId) || out.some((s) => s.type === "chunk" && s.id === sourceId)) continue
        const source = yield* knowledge.sourceOf(tenant, agentId, sourceId)
        if (Option.isNone(source)) continue
        // a training agent's lesson source names its lesson
        const owner = source.value.lesson_source_id
        const lesson = owner === null ? Option.none() : yield* lessons.lessonOf(tenant, agentId, owner)
        titles.set(hit.id, source.value.title)
        out.push({
          type: "chunk",
          id: source.value.id,
          title: source.value.title,
          url: source.value.type === "url" ? source.value.source_ref : null,
          ...(Option.isSome(lesson) ? { lesson: lesson.value } : {})
        })
      }
      const grounding: Array<Grounding> = hits.map((hit) => ({
        kind: hit.kind,
        title: hit.kind === "qa" ? (hit.question ?? "") : (titles.get(hit.id) ?? ""),
        text: hit.text,
        score: hit.score
      }))
      return { sources: out, grounding }
    })

    /** Knowledge and glossary read, sources described; the tokens are the caller's to run. */
    const prepare = Effect.fn("Answering.prepare")(function* (input: AnswerInput) {
      // read once: retrieval expands the query with them, and the model is told the synonyms too
      const terms = yield* glossary.enabledTerms(input.tenant, input.agentId)
      // a follow-up is searched with what the earlier questions were about (`FollowUp.ts`)
      const plan = searchPlan(
        input.question,
        input.history.filter((turn) => turn.role === "user").map((turn) => turn.content)
      )
      const limit = plan.kind === "alone" ? answerHits : 2 * answerHits
      const found = yield* retrieval.search(input.tenant, input.agentId, plan.query, { limit, terms, subject: plan.subject })
      const alone = searchesAlone(plan) ? yield* retrieval.search(input.tenant, input.agentId, input.question, { limit, terms }) : []
      const hits = rankForPlan(plan, found, alone)
        .filter((hit) => hit.relevant)
        .slice(0, answerHits)
      const described = yield* describe(input.tenant, input.agentId, hits)
      const expanded = hits.length === 0 ? input.question : expandQuery(input.question, terms)
      const visitorLanguage = chooseTextLanguage({ question: input.question, locale: input.locale, agentLanguage: input.agentLanguage })
      const tokens: Stream.Stream<string, AiError> =
        hits.length === 0
          ? Stream.fromIterable(wordTokens(fallbackAnswerIn(visitorLanguage)))
          : ai.answer({
              instructions: input.instructions,
              question: input.question,
              history: input.history,
              grounding: described.grounding,
              expandedQuery: expanded === input.question ? undefined : expanded,
              // the question's own language, else the one its fallback would be in
              language: questionLanguage(input.question, input.agentLanguage) ?? visitorLanguage
            })
      return {
        tokens,
        sources: described.sources,
        grounding: described.grounding,
        outcome: hits.length === 0 ? "fallback" : "answered",
        language: visitorLanguage
      } satisfies PreparedAnswer
    })

    /** A question on its own, answered whole. */
    const answerOnce = (input: Omit<AnswerInput, "history">) =>
      Effect.flatMap(prepare({ ...input, history: [] }), (prepared) =>
        Effect.map(
          Stream.runFold(prepared.tokens, "", (text, piece) => text + piece),
          (content): Answer => ({ content, sources: prepared.sources, outcome: prepared.outcome })
        )
      )

    return { prepare, answerOnce } as const
  }),
  dependencies: [Knowledge.Default, LessonSources.Default, Glossary.Default]
}) {}

/**
 * Follow-ups read in context: what retrieval is asked for a message of a conversation. A deterministic rule,
 * the same whatever the AI provider, over the visitor's own words only (never the replies' text, whose words
 * would draw in whatever was answered before).
 *
 * - A question that points back (a referring word: "that", "it", "there", "eso", "ahí", …) or opens as a
 *   continuation ("and …", "what about …", "y para …", "qué hay de …"), with few content words of its own, or
 *   one with at most one content word, is a follow-up. Anything else is self-contained and searched alone, so an
 *   unrelated question is not pulled towards the earlier topic.
 * - A follow-up is searched with the content words of the earlier questions added, back to the last
 *   self-contained one (at most `contextTurns`).
 * - A follow-up that names a subject of its own without pointing back ("and to Spain?") asks about that subject
 *   now: it is searched alone too (the earlier words may outweigh its own), and only hits that hold one of its
 *   own words count. A referring one ("how long does that take?") prefers such hits but keeps the others, since
 *   its own words may not be the knowledge's.
 *
 * - A referring follow-up that names at most `maxSubjectOwnWords` words of its own ("Which countries belong to
 *   it?") is about the earlier questions' subject: a hit covering that subject covers it (`SearchPlan.subject`),
 *   though it seldom repeats the follow-up's own words (the passage names the countries, not "countries").
 *
 * The reply's prompt keeps the visitor's question as asked: only retrieval's query changes.
 */
import { stem, stopWords, words } from "../../layers/ai/Text.js"
import { meaningWords } from "../knowledge/Relevance.js"

/** Earlier user questions read back at most. */
export const contextTurns = 3
/** A question pointing back with more content words than this says what it is about by itself. */
const maxOwnWords = 3
/** A referring follow-up with more content words than this asks about something of its own ("this shirt in a larger size"). */
const maxSubjectOwnWords = 2

const referring: ReadonlySet<string> = new Set(
  (
    "that this it its they them their theirs there those these one ones he she him her " +
    "eso esto esa ese esta este esos esas estos estas ahi alli alla ellos ellas lo su sus"
  ).split(" ")
)

/** Words of asking that say nothing of the subject ("how many", "cuántos"). */
const weak: ReadonlySet<string> = new Set("many much also else cuantos cuantas tal hi hello thanks thank ok okay".split(" "))

/** Continuations as the question's first words, folded. */
const openers: ReadonlyArray<ReadonlyArray<string>> = [
  ["and"],
  ["also"],
  ["or"],
  ["what", "about"],
  ["how", "about"],
  ["what", "if"],
  ["y"],
  ["o"],
  ["tambien"],
  ["que", "hay", "de"],
  ["que", "tal"]
]

export type FollowUpKind = "alone" | "referring" | "contrast"

export interface SearchPlan {
  readonly kind: FollowUpKind
  /** What retrieval is asked: the question, plus the earlier questions' content words for a follow-up. */
  readonly query: string
  /** The question's own content words, stemmed: what a `contrast` follow-up's hits must hold one of. */
  readonly own: ReadonlyArray<string>
  /** For a referring follow-up naming little of its own: the earlier questions' content words it points back to. */
  readonly subject: string | null
}

/** What a turn names of its own: no stop word, no word of a phrase that names nothing ("in order to", "take place"). */
const contentWords = (text: string): Array<string> =>
  meaningWords(text).filter((w) => w.length > 1 && !stopWords.has(w) && !referring.has(w) && !weak.has(w))

const opens = (tokens: ReadonlyArray<string>) => openers.some((o) => o.every((w, i) => tokens[i] === w))

/** How a question stands on its own, apart from any context. */
export const kindOf = (question: string): FollowUpKind => {
  const tokens = words(question)
  const own = contentWords(question)
  const points = tokens.some((w) => referring.has(w))
  if (points && own.length <= maxOwnWords) return "referring"
  if (own.length === 0) return "referring"
  if (opens(tokens) && own.length <= maxOwnWords) return "contrast"
  if (own.length <= 1) return "contrast"
  return "alone"
}

/**
 * The search for `question` after the conversation's earlier user questions (oldest first). With no earlier
 * question, or a self-contained one, the question alone.
 */
export const searchPlan = (question: string, earlier: ReadonlyArray<string>): SearchPlan => {
  const own = [...new Set(contentWords(question).map(stem))]
  const kind = kindOf(question)
  if (kind === "alone" || earlier.length === 0) return { kind: "alone", query: question, own, subject: null }
  const seen = new Set(words(question))
  const context: Array<string> = []
  const back = earlier.slice(-contextTurns).reverse()
  for (const turn of back) {
    for (const w of contentWords(turn)) {
      if (seen.has(w)) continue
      seen.add(w)
      context.push(w)
    }
    // the subject was set here: what came before it is another topic
    if (kindOf(turn) === "alone") break
  }
  if (context.length === 0) return { kind: "alone", query: question, own, subject: null }
  const subject = kind === "referring" && own.length <= maxSubjectOwnWords ? context.join(" ") : null
  return { kind, query: `${question} ${context.join(" ")}`, own, subject }
}

/** Whether retrieval is asked the question as sent besides the plan's query. */
export const searchesAlone = (plan: SearchPlan): boolean => plan.kind === "contrast"

/** A hit as ranked here: what it says, for checking which of the question's own words it holds. */
export interface Ranked {
  readonly id: string
  readonly text: string
  readonly question: string | null
  readonly score: number
  /** Whether retrieval found it relevant to the query it was searched with. */
  readonly relevant?: boolean
}

const holds = (hit: Ranked, own: ReadonlySet<string>) =>
  words(`${hit.question ?? ""} ${hit.text}`).some((w) => own.has(stem(w)))

/**
 * A follow-up's hits (each search's best first) in the order the reply uses them: for a `contrast` one, those of
 * both searches holding one of the question's own words, each at its better score (relevant when either search
 * found it so), best first; for a referring
 * one, those holding one of its own words first. A self-contained question's hits are as retrieval gave them.
 */
export const rankForPlan = <H extends Ranked>(plan: SearchPlan, hits: ReadonlyArray<H>, alone: ReadonlyArray<H> = []): Array<H> => {
  if (plan.kind === "alone" || plan.own.length === 0) return [...hits]
  const own = new Set(plan.own)
  if (plan.kind === "contrast") {
    const best = new Map<string, H>()
    for (const hit of [...hits, ...alone]) {
      if (!holds(hit, own)) continue
      const known = best.get(hit.id)
      if (known === undefined) best.set(hit.id, hit)
      else {
        // relevant when either search found it so: alone its own words may be too few to cover, with the
        // earlier ones the passage may hold them all
        const better = hit.score > known.score ? hit : known
        const relevant = known.relevant === true || hit.relevant === true
        best.set(hit.id, relevant && better.relevant !== true ? { ...better, relevant } : better)
      }
    }
    return [...best.values()].sort((a, b) => b.score - a.score)
  }
  return [...hits.filter((h) => holds(h, own)), ...hits.filter((h) => !holds(h, own))]
}

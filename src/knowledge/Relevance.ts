/**
 * Whether a hit answers the question, beyond its score: how much of the question it covers. One word shared
 * between a question and a passage ("return" in "can I return a gift?" and in a passage on the return of
 * troops) is not evidence; holding several of the question's words, a fair share of them, is, and so is an
 * embedding close to the question's.
 *
 * A hit covers the question when its cosine is at least `closeCosine`; or, for a question of one content word
 * ("And in Brandun?"), when it holds that word; or, for a longer one, when it holds at least `minShare` of its
 * content words and at least `minHeld` of them (`pairHeld` with a cosine of at least `pairCosine`, or all of them:
 * "What is the Baghdad Pact?" against the passage on it). Retrieval asks this of hits whose score passes its
 * threshold.
 *
 * A question's frame is not its subject: in "How long does delivery take?" only *delivery* says what it is about,
 * and a passage on delivery times answers it without holding *long* or *take*. Those words (`frameWords`) are left
 * out before coverage is counted, as stop words are.
 */
import { stem, stopWords, words } from "../../layers/ai/Text.js"

const closeCosine = 0.5
const minShare = 0.3
const minHeld = 3
const pairHeld = 2
const pairCosine = 0.35

/** What the rule reads of a hit: its words and its embedding cosine to the question. */
export interface Covered {
  readonly text: string
  readonly question: string | null
  readonly cosine: number
}

/**
 * Words that shape an English question (how long, how much, how often, what time, is it possible) rather than
 * name its subject; an answer states the length, the cost or the time without repeating them.
 */
export const frameWords: ReadonlySet<string> = new Set(
  ("long take takes taking took much many often soon far time times cost costs way ways possible able " +
    "anyone someone anything something thing things happen happens happened")
    .split(" ")
)

/** The question's content words, stemmed, each once: neither stop words nor its frame. */
export const contentStems = (text: string): ReadonlySet<string> =>
  new Set(words(text).filter((w) => w.length > 1 && !stopWords.has(w) && !frameWords.has(w)).map(stem))

export const covers = (hit: Covered, question: string): boolean => {
  if (hit.cosine >= closeCosine) return true
  const asked = contentStems(question)
  if (asked.size === 0) return false
  const holds = new Set(words(`${hit.question ?? ""} ${hit.text}`).map(stem))
  const held = [...asked].filter((s) => holds.has(s)).length
  if (asked.size === 1) return held === 1
  if (held / asked.size < minShare) return false
  return held >= minHeld || (held >= pairHeld && (held === asked.size || hit.cosine >= pairCosine))
}

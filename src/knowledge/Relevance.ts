/**
 * Whether a hit answers the question, beyond its score: how much of the question it covers. One word shared
 * between a question and a passage ("return" in "can I return a gift?" and in a passage on the return of
 * troops) is not evidence; holding several of the question's words, a fair share of them, is, and so is an
 * embedding close to the question's.
 *
 * A hit covers the question when its cosine is at least `closeCosine`; or, for a question of one content word
 * ("And in Brandun?", "How long does delivery take?"), when it names that word as what it is about (in its first
 * line, a title or a heading, or its Q&A question), not in passing; or, for a longer one, when it holds at least
 * `minShare` of its content words and either `pairHeld` with a cosine of at least `pairCosine`, or `minHeld` with
 * two of them said together (within `nearWords`), or all of a short question's together ("What is the Baghdad Pact?" against the passage on it, where
 * a passage that speaks of a ship in one sentence and of Canada in another does not answer "Do you ship to
 * Canada?"). Retrieval asks this of hits whose score passes its threshold.
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
/** Content words of the hit that a short question's words must all fall within, to be read as said together. */
const nearWords = 4

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
const frameWords: ReadonlySet<string> = new Set(
  ("long take takes taking took much many often soon far time times cost costs way ways possible able " +
    "anyone someone anything something thing things happen happens happened")
    .split(" ")
)

/**
 * Phrases that work as one preposition or conjunction ("in order to", "in terms of", "on behalf of"): the noun
 * inside them names nothing, as a stop word does not. "In order to meet the changed conditions" says nothing of
 * an order.
 */
const phrases = (list: string): ReadonlyArray<ReadonlyArray<string>> => list.split("|").map((phrase) => phrase.split(" "))

const functionPhrases = phrases(
  "in order to|in order that|in case of|in terms of|in view of|in place of|in addition to|in spite of|" +
    "in respect of|in respect to|with respect to|with regard to|by means of|by way of|on behalf of|as well as|" +
    "at least|at last|at all"
)

/** "Take place" is the frame's "happen": "Where did their first conference take place?" asks of a conference. */
const framePhrases = phrases("take place|takes place|took place|taking place|taken place")

const phrasesByFirstWord = new Map<string, Array<ReadonlyArray<string>>>()
for (const phrase of [...functionPhrases, ...framePhrases]) {
  phrasesByFirstWord.set(phrase[0]!, [...(phrasesByFirstWord.get(phrase[0]!) ?? []), phrase])
}

/** The text's words, those of function and frame phrases left out. */
export const meaningWords = (text: string): Array<string> => {
  const all = words(text)
  const kept: Array<string> = []
  for (let i = 0; i < all.length; i++) {
    const phrase = phrasesByFirstWord.get(all[i]!)?.find((p) => p.every((w, k) => all[i + k] === w))
    if (phrase === undefined) kept.push(all[i]!)
    else i += phrase.length - 1
  }
  return kept
}

/** The question's content words, stemmed, each once: neither stop words nor its frame. */
export const contentStems = (text: string): ReadonlySet<string> =>
  new Set(meaningWords(text).filter((w) => w.length > 1 && !stopWords.has(w) && !frameWords.has(w)).map(stem))

/** The stems of the hit's content words in order, stop words and function phrases left out. */
const contentSequence = (text: string): Array<string> => meaningWords(text).filter((w) => !stopWords.has(w)).map(stem)

/** Whether every one of `asked` occurs within some `nearWords` consecutive content words of `sequence`. */
const together = (sequence: ReadonlyArray<string>, asked: ReadonlySet<string>): boolean => {
  const last = new Map<string, number>()
  for (let i = 0; i < sequence.length; i++) {
    if (!asked.has(sequence[i]!)) continue
    last.set(sequence[i]!, i)
    if (last.size === asked.size && i - Math.min(...last.values()) < nearWords) return true
  }
  return false
}

/** What the hit says it is about: its first line (a title or a heading) and its Q&A question. */
const named = (hit: Covered): ReadonlySet<string> =>
  new Set(words(`${hit.question ?? ""} ${hit.text.split("\n", 1)[0] ?? ""}`).map(stem))

export const covers = (hit: Covered, question: string): boolean => {
  if (hit.cosine >= closeCosine) return true
  const asked = contentStems(question)
  if (asked.size === 0) return false
  if (asked.size === 1) return named(hit).has([...asked][0]!)
  const sequence = contentSequence(`${hit.question ?? ""} ${hit.text}`)
  const holds = new Set(sequence)
  const heldStems = [...asked].filter((s) => holds.has(s))
  const held = heldStems.length
  if (held / asked.size < minShare) return false
  if (held >= pairHeld && hit.cosine >= pairCosine) return true
  if (held >= minHeld) return heldStems.some((a, i) => heldStems.slice(i + 1).some((b) => together(sequence, new Set([a, b]))))
  return held === asked.size && together(sequence, asked)
}

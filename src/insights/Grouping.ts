/**
 * Similar questions together, deterministically: each question's content terms (the local provider's folding,
 * stop words and stemming), and a question joins the group whose first question's terms it overlaps most,
 * with a Jaccard similarity of at least `minSimilarity`; a question of stop words only joins the same words.
 * Questions go oldest first, so the same questions always make the same groups. Candidate groups are found
 * through the terms they hold, so the work grows with the questions, not with their pairs.
 */
import { terms, words } from "../../layers/ai/Text.js"

export const minSimilarity = 0.5

export interface Asked {
  readonly question: string
  readonly conversationId: string
  readonly at: Date
}

export interface Group {
  /** The most asked wording, the latest of equals. */
  readonly question: string
  readonly count: number
  /** Distinct, newest first. */
  readonly conversationIds: ReadonlyArray<string>
  readonly lastAskedAt: Date
}

interface Building {
  readonly seed: ReadonlySet<string>
  readonly members: Array<Asked>
}

/** A wording as its words: case, accents and punctuation aside. */
const wording = (question: string) => words(question).join(" ")

const jaccard = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
  let shared = 0
  for (const t of a) if (b.has(t)) shared++
  return shared / (a.size + b.size - shared)
}

/** The groups of `asked` (any order), largest first, then the latest asked. */
export const groupQuestions = (asked: ReadonlyArray<Asked>): Array<Group> => {
  const ordered = [...asked].sort((x, y) => x.at.getTime() - y.at.getTime() || x.question.localeCompare(y.question))
  const groups: Array<Building> = []
  const byTerm = new Map<string, Array<number>>()
  const byWords = new Map<string, number>()
  for (const item of ordered) {
    const own = new Set(terms(item.question))
    if (own.size === 0) {
      const key = wording(item.question)
      const found = byWords.get(key)
      if (found !== undefined) groups[found]!.members.push(item)
      else {
        byWords.set(key, groups.length)
        groups.push({ seed: own, members: [item] })
      }
      continue
    }
    let best = -1
    let bestScore = 0
    const seen = new Set<number>()
    for (const t of own) {
      for (const index of byTerm.get(t) ?? []) {
        if (seen.has(index)) continue
        seen.add(index)
        const score = jaccard(own, groups[index]!.seed)
        // ties go to the older group
        if (score >= minSimilarity && (score > bestScore || (score === bestScore && index < best))) {
          best = index
          bestScore = score
        }
      }
    }
    if (best >= 0) {
      groups[best]!.members.push(item)
      continue
    }
    const index = groups.length
    groups.push({ seed: own, members: [item] })
    for (const t of own) {
      const list = byTerm.get(t)
      if (list === undefined) byTerm.set(t, [index])
      else list.push(index)
    }
  }
  return groups
    .map((g): Group => {
      const newestFirst = [...g.members].reverse()
      const tally = new Map<string, { count: number; text: string }>()
      for (const m of newestFirst) {
        const key = wording(m.question)
        const entry = tally.get(key)
        if (entry === undefined) tally.set(key, { count: 1, text: m.question })
        else entry.count++
      }
      // the first met (newest first) wins ties
      let example = newestFirst[0]!.question
      let most = 0
      for (const entry of tally.values()) {
        if (entry.count > most) {
          most = entry.count
          example = entry.text
        }
      }
      return {
        question: example,
        count: g.members.length,
        conversationIds: [...new Set(newestFirst.map((m) => m.conversationId))],
        lastAskedAt: newestFirst[0]!.at
      }
    })
    .sort(
      (a, b) =>
        b.count - a.count || b.lastAskedAt.getTime() - a.lastAskedAt.getTime() || a.question.localeCompare(b.question)
    )
}

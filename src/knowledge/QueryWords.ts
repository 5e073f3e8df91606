/**
 * A question's words as retrieval searches them (`Retrieval.ts`): glossary terms expanded, letters and digits
 * kept, and the text-search tiers its stemmed words are read in.
 */

export interface GlossaryTerm {
  readonly term: string
  readonly synonyms: ReadonlyArray<string>
  readonly case_sensitive: boolean
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const mentions = (query: string, phrase: string, caseSensitive: boolean) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${escape(phrase)}($|[^\\p{L}\\p{N}])`, caseSensitive ? "u" : "iu").test(query)

/** The query plus every term and synonym of each glossary entry it mentions. */
export const expandQuery = (query: string, terms: ReadonlyArray<GlossaryTerm>): string => {
  const extra: Array<string> = []
  for (const entry of terms) {
    const names = [entry.term, ...entry.synonyms]
    if (names.some((n) => n.trim() !== "" && mentions(query, n, entry.case_sensitive))) {
      extra.push(...names.filter((n) => !mentions(query, n, entry.case_sensitive)))
    }
  }
  return extra.length === 0 ? query : `${query} ${extra.join(" ")}`
}

/**
 * The question's words as they are searched: lower case, letters and digits, accents kept (the stemmer reads
 * them; the lexemes are folded after).
 */
export const searchWords = (text: string): string =>
  [...new Set(text.toLowerCase().normalize("NFC").match(/[\p{L}\p{N}]{2,}/gu) ?? [])].slice(0, 64).join(" ")

// `search_fold`'s letters (migration 0048): each accented letter beside the plain one it folds to
const accented = "áàâäãåāăąéèêëēėęěíìîïīįóòôöõøōőúùûüūůűųñńňçćčýÿšśžźżďťřľĺłđ"
const plain = "aaaaaaaaaeeeeeeeeiiiiiioooooooouuuuuuuunnncccyysszzzdtrllld"
const variants = new Map<string, string>()
for (let i = 0; i < plain.length; i++) variants.set(plain[i]!, (variants.get(plain[i]!) ?? plain[i]!) + accented[i]!)

/** What `search_fold` makes of a text: lower case, accents off. */
export const fold = (text: string): string =>
  [...text.toLowerCase()].map((c) => (accented.includes(c) ? plain[accented.indexOf(c)]! : c)).join("")

/**
 * A PostgreSQL regular expression, matched with the `i` flag, that finds each of `forms` as a whole word in a
 * text as `search_fold` would read it (any case, accented or not), without folding the text: folding a passage
 * costs far more than reading it once. Null when there are none. The forms are `searchWords`' (letters and
 * digits): nothing in them is the expression's syntax.
 */
export const formsPattern = (forms: ReadonlyArray<string>): string | null => {
  const folded = [...new Set(forms.map(fold))].filter((f) => f !== "")
  if (folded.length === 0) return null
  const alternatives = folded.map((f) => [...f].map((c) => (variants.has(c) ? `[${variants.get(c)}]` : c)).join(""))
  return `\\m(${alternatives.join("|")})\\M`
}

// how many of a question's common words are paired in the middle tier
const pairLexemes = 5

/** A text-search tier: a `simple` tsquery, and whether its matches are ranked before the cap or taken as found. */
export interface Tier {
  readonly query: string
  readonly ranked: boolean
}

/**
 * The text-search tiers over already-stemmed lexemes, each read through the GIN index on its own: every word
 * (an AND, which the index answers by walking the rarest word's entries); any of the rare words; and, when fewer
 * than two words are rare, pairs of the common ones. The first two are few rows (a rare word's entries are few),
 * so their matches are ranked before the cap: which rows of a tier are kept never depends on where they lie. A
 * pair of common words may match most rows: its first ones are taken as found. A common word never draws
 * candidates alone.
 */
export const tiers = (lexemes: ReadonlyArray<string>, common: ReadonlySet<string>): ReadonlyArray<Tier> => {
  if (lexemes.length === 0) return []
  const rare = lexemes.filter((l) => !common.has(l))
  const out: Array<Tier> = [{ query: lexemes.join(" & "), ranked: true }]
  if (rare.length > 0 && lexemes.length > 1) out.push({ query: rare.join(" | "), ranked: true })
  if (rare.length < 2) {
    const paired = lexemes.filter((l) => common.has(l)).slice(0, pairLexemes)
    for (let i = 0; i < paired.length; i++) {
      for (let j = i + 1; j < paired.length; j++) out.push({ query: `${paired[i]} & ${paired[j]}`, ranked: false })
    }
  }
  return out
}

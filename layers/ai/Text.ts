/**
 * Text features shared by the local provider: folding, tokens, light stemming
 * (English and Spanish), stop words, and the hashing embedder.
 */

/** Lower case, accents folded (á → a, ñ → n), so "Canción" and "cancion" meet. */
export const fold = (text: string): string =>
  text.normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase()

export const words = (text: string): Array<string> => fold(text).match(/[a-z0-9]+/g) ?? []

const stopList = `
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
our ours out over own same she should so some such than that the their theirs them then there these they this
those through to too under until up very was we were what when where which while who whom why will with would
you your yours get got please tell know want need let us may might must shall yes
al algo algun alguna algunas alguno algunos ante antes como con contra cual cuales cuando de del desde donde
durante e el ella ellas ellos en entre era eran es esa esas ese eso esos esta estan estas este esto estos fue
fueron ha han hasta hay la las le les lo los mas me mi mis mucho muy nada ni no nos nosotros o os otra otro para
pero poco por porque que quien quienes se sea ser si sin sobre son su sus tambien te tiene tienen toda todo
todos tu tus un una uno unos usted ustedes y ya yo puedo puede pueden hacer hago quiero saber cual cuanto cuanta
`
export const stopWords: ReadonlySet<string> = new Set(stopList.split(/\s+/).filter((w) => w.length > 0))

const suffixes: ReadonlyArray<readonly [string, string]> = [
  // longest first; each keeps a stem of at least 3 letters
  ["aciones", "a"],
  ["iciones", "i"],
  ["ciones", "c"],
  ["ation", "at"],
  ["mente", ""],
  ["ments", ""],
  ["ment", ""],
  ["ings", ""],
  ["ing", ""],
  ["ies", "y"],
  ["cion", "c"],
  ["edad", ""],
  ["idad", ""],
  ["ando", ""],
  ["iendo", ""],
  ["ados", ""],
  ["adas", ""],
  ["ado", ""],
  ["ada", ""],
  ["ed", ""],
  ["es", ""],
  ["ly", ""],
  ["s", ""],
  ["ar", ""],
  ["er", ""],
  ["ir", ""],
  ["e", ""],
  ["o", ""],
  ["a", ""],
  ["y", ""]
]

const cacheLimit = 50_000

/**
 * Memoises a function of a string. Ingestion meets the same words in text
 * after text, so each is worked out once; the cache is emptied when full so a
 * long run over an open vocabulary keeps its memory bounded.
 */
const bounded = <A>(compute: (key: string) => A): (key: string) => A => {
  const cache = new Map<string, A>()
  return (key) => {
    const known = cache.get(key)
    if (known !== undefined) return known
    if (cache.size >= cacheLimit) cache.clear()
    const value = compute(key)
    cache.set(key, value)
    return value
  }
}

const stripOnce = (word: string): string => {
  if (word.length <= 3 || /^[0-9]+$/.test(word)) return word
  for (const [suffix, replacement] of suffixes) {
    if (suffix === "s" && word.endsWith("ss")) continue
    if (word.endsWith(suffix) && word.length - suffix.length + replacement.length >= 3) {
      return word.slice(0, word.length - suffix.length) + replacement
    }
  }
  return word
}

const stemCache = bounded((word) => stripOnce(stripOnce(word)))

/**
 * A light suffix stripper, two passes so "orders", "ordered" and "order" (or
 * "contraseñas" and "contraseña") meet on one stem.
 */
export const stem = (word: string): string => stemCache(word)

/** Content terms: folded, stop words out, stemmed. */
export const terms = (text: string): Array<string> =>
  words(text)
    .filter((w) => w.length > 1 && !stopWords.has(w))
    .map(stem)

// FNV-1a, 32 bits: stable across runs and platforms
const hash = (text: string, seed: number): number => {
  let h = 0x811c9dc5 ^ seed
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/**
 * A feature's hash and signed weight; its slot is `hash % dimensions`, so one
 * precomputed feature serves every vector length.
 */
interface Feature {
  readonly hash: number
  readonly weight: number
}

const feature = (text: string, weight: number): Feature => {
  // a sign from other bits keeps collisions from piling up in one direction
  const sign = (hash(text, 0x9e3779b9) & 1) === 0 ? 1 : -1
  return { hash: hash(text, 0), weight: sign * weight }
}

const add = (vector: Float64Array, f: Feature) => {
  vector[f.hash % vector.length] += f.weight
}

const apply = (vector: Float64Array, features: ReadonlyArray<Feature>) => {
  for (const f of features) add(vector, f)
}

/** A content word: its stem (weight 1) and the stem's trigrams, in that order. */
const stemFeatures = (s: string): ReadonlyArray<Feature> => {
  const padded = `^${s}$`
  const grams = Math.max(1, padded.length - 2)
  const features = [feature(`w:${s}`, 1)]
  for (let i = 0; i + 3 <= padded.length; i++) features.push(feature(`g:${padded.slice(i, i + 3)}`, 0.8 / Math.sqrt(grams)))
  return features
}

const stopWordFeatures = (word: string): ReadonlyArray<Feature> => [feature(`w:${word}`, 0.15)]

// a word's features do not depend on the text around it, so they are hashed once per word
const stemFeaturesCache = bounded(stemFeatures)
const stopWordFeaturesCache = bounded(stopWordFeatures)

/**
 * Feature hashing of stemmed content words (weight 1), their character
 * trigrams (weight spread over the word's trigrams, so a misspelling or
 * an unstemmed form still shares most of its mass) and adjacent word pairs;
 * stop words count a little. L2-normalised; a text with no features maps to
 * a fixed unit vector.
 */
export const hashEmbed = (text: string, dimensions: number): Array<number> => {
  const vector = new Float64Array(dimensions)
  const all = words(text)
  let previous: string | null = null
  for (const word of all) {
    if (stopWords.has(word) || word.length < 2) {
      apply(vector, stopWordFeaturesCache(word))
      previous = null
      continue
    }
    const s = stem(word)
    apply(vector, stemFeaturesCache(s))
    // pairs are too many to be worth keeping
    if (previous !== null) add(vector, feature(`b:${previous} ${s}`, 0.5))
    previous = s
  }
  let norm = 0
  for (const x of vector) norm += x * x
  if (norm === 0) {
    const unit = new Array<number>(dimensions).fill(0)
    unit[0] = 1
    return unit
  }
  const scale = 1 / Math.sqrt(norm)
  return Array.from(vector, (x) => x * scale)
}

export const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  let dot = 0
  for (let i = 0; i < a.length && i < b.length; i++) dot += a[i]! * b[i]!
  return dot
}

/** First sentence of a paragraph (up to `.`, `!` or `?` followed by a space or the end). */
export const firstSentence = (text: string): string => {
  const match = /^(.+?[.!?])(\s|$)/s.exec(text.trim())
  return (match ? match[1]! : text.trim()).replace(/\s+/g, " ")
}

/** Spanish when its stop words outnumber English ones: picks the question templates. */
export const looksSpanish = (text: string): boolean => {
  const es = new Set(["el", "la", "los", "las", "de", "que", "y", "en", "para", "con", "por", "una", "es", "del", "se"])
  const en = new Set(["the", "of", "and", "to", "in", "is", "for", "with", "on", "that", "it", "you", "are", "a", "be"])
  let score = 0
  for (const w of words(text).slice(0, 400)) {
    if (es.has(w)) score++
    if (en.has(w)) score--
  }
  return score > 0
}

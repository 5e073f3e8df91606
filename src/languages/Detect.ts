/**
 * Which language a text is written in, from `lande` (a small neural network over character n-grams: a few
 * megabytes, a fraction of a millisecond a question). Chosen by measurement on short questions and long
 * passages in English, Spanish, Portuguese, French and German; `scripts/bench/results/language-detector.md`
 * has the comparison with franc, tinyld and eld.
 *
 * A short text is often ambiguous between close languages ("¿Envían a Canadá?" reads as Hungarian to every
 * detector), so callers say which languages are plausible (an agent's knowledge's), and what a text that
 * cannot be told gets (the agent's language, or the widget's locale).
 */
import lande from "lande"
import { type LanguageTag, languageTags } from "../../schema/Languages.js"

/** lande names languages by ISO 639-3; the service by ISO 639-1. */
const fromIso3: Readonly<Record<string, LanguageTag>> = {
  afr: "af", ara: "ar", aze: "az", bel: "be", ben: "bn", bul: "bg", cat: "ca", ces: "cs", ckb: "ckb", cmn: "zh",
  dan: "da", deu: "de", ell: "el", eng: "en", est: "et", eus: "eu", fin: "fi", fra: "fr", hau: "ha", heb: "he",
  hin: "hi", hrv: "hr", hun: "hu", hye: "hy", ind: "id", isl: "is", ita: "it", jpn: "ja", kat: "ka", kaz: "kk",
  kor: "ko", lit: "lt", mar: "mr", mkd: "mk", nld: "nl", nob: "nb", pes: "fa", pol: "pl", por: "pt", ron: "ro",
  run: "rn", rus: "ru", slk: "sk", spa: "es", srp: "sr", swe: "sv", tgl: "tl", tur: "tr", ukr: "uk", vie: "vi"
}

/** The share of the plausible languages' probability the first must hold to be believed. */
const confidence = 0.6

/** Characters read of a long text: three slices, so a preface in another language does not decide. */
const slice = 1_000

const sample = (text: string): string =>
  text.length <= 3 * slice
    ? text
    : [0, Math.floor(text.length / 2 - slice / 2), text.length - slice].map((at) => text.slice(at, at + slice)).join("\n")

const letters = /\p{L}/gu

export interface Detection {
  readonly language: LanguageTag
  /** False when the text was too short or too mixed to tell, and `language` is the fallback. */
  readonly detected: boolean
}

/**
 * The language of `text`, among `among` (every language when empty or absent); `fallback` when the text has
 * too few letters or no language is clearly first.
 */
export const detectLanguage = (
  text: string,
  options: { readonly among?: ReadonlyArray<LanguageTag>; readonly fallback: LanguageTag }
): Detection => {
  const among = options.among ?? []
  if (among.length === 1) return { language: among[0]!, detected: true }
  const read = sample(text)
  if ((read.match(letters)?.length ?? 0) < 3) return { language: options.fallback, detected: false }
  const plausible = new Set<LanguageTag>(among.length === 0 ? languageTags : among)
  let total = 0
  let best: LanguageTag | undefined
  let bestP = 0
  for (const [iso3, p] of lande(read)) {
    const tag = fromIso3[iso3]
    if (tag === undefined || !plausible.has(tag)) continue
    total += p
    if (p > bestP) {
      best = tag
      bestP = p
    }
  }
  return best !== undefined && total > 0 && bestP / total >= confidence
    ? { language: best, detected: true }
    : { language: options.fallback, detected: false }
}

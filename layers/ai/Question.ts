/**
 * A visitor's question made from one sentence of a document, for the local
 * provider's Q&A drafts: only when the sentence has a shape that turns into a
 * question reliably ("X takes 3 days" → "How long does X take?"), otherwise
 * none. Deterministic, English and Spanish.
 */
import { stopWords } from "./Text.js"

/** Words a noun phrase may hold besides content words; never its first or last word unless a determiner. */
const determiners = new Set([
  "the", "a", "an", "our", "your", "el", "la", "los", "las", "un", "una", "unos", "unas", "nuestro", "nuestra",
  "nuestros", "nuestras", "tu", "tus"
])
const linking = new Set(["of", "for", "and", "in", "on", "with", "de", "del", "y", "e", "para", "con", "en"])
const maxSubjectWords = 6
const maxSubjectChars = 50
const maxRestWords = 14

const token = /^[\p{L}\p{N}][\p{L}\p{N}'’-]*$/u

/** The folded form of a word for matching (lower case, accents kept: Spanish verbs differ by them). */
const low = (word: string) => word.toLowerCase()

/**
 * A subject noun phrase, or null: a few plain words, content words apart from
 * determiners and linking words, none a pronoun (a pronoun loses its referent
 * once the sentence stands alone as a question).
 */
const subjectOf = (parts: ReadonlyArray<string>): ReadonlyArray<string> | null => {
  if (parts.length === 0 || parts.length > maxSubjectWords || parts.join(" ").length > maxSubjectChars) return null
  for (const [i, part] of parts.entries()) {
    if (!token.test(part)) return null
    const w = low(part)
    const isDeterminer = determiners.has(w)
    if (isDeterminer && i > 0 && !linking.has(low(parts[i - 1]!))) return null
    if (linking.has(w) && (i === 0 || i === parts.length - 1)) return null
    if (isDeterminer || linking.has(w)) continue
    if (stopWords.has(w.normalize("NFD").replace(/\p{M}+/gu, ""))) return null
  }
  if (determiners.has(low(parts[parts.length - 1]!))) return null
  // "the first argument", "the same value": said of something named before
  if (/^(?:first|second|third|last|next|following|previous|same|other|former|latter|above|below|primer|primera|segundo|segunda|último|última|siguiente|mismo|misma|otro|otra)$/.test(low(parts[1] ?? ""))) return null
  return parts
}

/**
 * The subject as said inside a question: "our" becomes the visitor's "your",
 * and a sentence-initial capital is dropped unless the word is a name (it
 * keeps capitals inside, or the document never writes it in lower case).
 */
const phrase = (subject: ReadonlyArray<string>, spanish: boolean, common: (word: string) => boolean): string => {
  const out = subject.map((w) => {
    const l = low(w)
    if (!spanish && l === "our") return "your"
    if (spanish && /^nuestr[oa]s?$/.test(l)) return l.replace("nuestr", "vuestr")
    return w
  })
  const first = out[0]!
  // "Express delivery" is a common noun phrase; "Acme Store", "PayPal" and a word never written in lower case are names
  const lowerAfter = out.length > 1 && out.slice(1).every((w) => !/^\p{Lu}/u.test(w))
  const name = /^\p{Lu}.*\p{Lu}/u.test(first) || (!determiners.has(low(first)) && !lowerAfter && !common(first))
  if (!name) out[0] = first.charAt(0).toLowerCase() + first.slice(1)
  return out.join(" ")
}

const pastParticiple = /^(?:\w+ed|sent|sold|made|paid|done|given|taken|shown|built|set|reset|kept|held|written|found|shut|put|run|brought|bought|known|seen|chosen|sent|delivered|shipped)$/
const timeUnit = /\b(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|nights?|segundos?|minutos?|horas?|d[ií]as?|semanas?|mes|meses|años?|noches?)\b/iu
const amount = /\d|[$€£¥]|\b(?:free|euros?|dollars?|pounds?|cents?|gratis|dólares|libras)\b/iu
const clock = /\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h)?|noon|midnight|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekdays?|daily|every day|lunes|martes|miércoles|jueves|viernes|sábados?|domingos?|mediodía|medianoche)\b/iu
const date = /\b(?:\d{4}|\d{1,2}(?:st|nd|rd|th)?|january|february|march|april|may|june|july|august|september|october|november|december|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|spring|summer|autumn|fall|winter|primavera|verano|otoño|invierno)\b/iu

/** The rest of a "you can …" sentence as the visitor would say it, or null when it is too long or not plain. */
const visitorRest = (rest: ReadonlyArray<string>, spanish: boolean): string | null => {
  const words = rest[0] !== undefined && /^(?:also|always|now|still|even|también|siempre|ahora)$/i.test(rest[0]) ? rest.slice(1) : rest
  if (words.length === 0 || words.length > maxRestWords) return null
  const text = words.join(" ")
  if (/[,;:()[\]{}<>=|#"“”]|https?\b|www\./iu.test(text) || /\b(?:if|unless|when|but|si|cuando|pero)\b/iu.test(text)) return null
  // a word that points back at the text around it means nothing in a question on its own
  if (/(?<![\p{L}])(?:it|its|this|that|these|those|they|them|their|here|there|above|below|esto|eso|estos|esos|esta|esa|estas|esas|ello|aquí|allí)(?![\p{L}])/iu.test(text)) return null
  const swap: Record<string, string> = spanish
    ? { tu: "mi", tus: "mis", nuestro: "vuestro", nuestra: "vuestra", nuestros: "vuestros", nuestras: "vuestras", te: "me", contigo: "conmigo" }
    : { your: "my", yours: "mine", yourself: "myself", you: "me", our: "your", ours: "yours", us: "you", we: "you" }
  return words.map((w) => swap[low(w)] ?? w).join(" ")
}

/** The visitors a "… can" sentence may be about; asked as "Can I …?". */
const visitors = /^(?:you|customers|users|visitors|clients|guests|members|buyers|shoppers|los clientes|los usuarios|los visitantes|los socios|los huéspedes)$/i

type Rule = (subject: string, verb: string, rest: ReadonlyArray<string>) => string | null

const does = (verb: string) => (/s$/.test(verb) ? "does" : "do")

const english: Record<string, Rule> = {}
const spanish: Record<string, Rule> = {}
const on = (table: Record<string, Rule>, verbs: ReadonlyArray<string>, rule: Rule) => {
  for (const v of verbs) table[v] = rule
}

on(english, ["is", "are"], (s, verb, rest) => {
  const [next, after] = [low(rest[0] ?? ""), rest[1] ?? ""]
  const text = rest.join(" ")
  const be = verb === "is" ? "Is" : "Are"
  if (/^(?:a|an|one)$/.test(next) || (next === "the" && !/^(?:same|best|only|first|last)$/i.test(after))) return `What ${verb} ${s}?`
  if (next === "open" && clock.test(text)) return `When ${verb} ${s} open?`
  if (next === "located" || (/^(?:in|at)$/.test(next) && /^\p{Lu}/u.test(after))) return `Where ${verb} ${s}?`
  if (/^(?:free|required|mandatory|optional|available|refundable|included)$/.test(next)) return `${be} ${s} ${next}?`
  if (pastParticiple.test(next) && low(after) === "by" && low(rest[2] ?? "") === "default") return `${be} ${s} ${next} by default?`
  if (pastParticiple.test(next) && rest.length > 1) {
    const how = /^(?:by|with|from|through|via|using|online|automatically|over)$/i.test(after)
    const where = /^(?:in|at)$/i.test(after) && /^\p{Lu}/u.test(rest[2] ?? "")
    const when = /^(?:every|each|daily|weekly|monthly|once|twice|within|after|before|on)$/i.test(after) && (after !== "on" || clock.test(text) || date.test(text))
    if (how) return `How ${verb} ${s} ${next}?`
    if (where) return `Where ${verb} ${s} ${next}?`
    if (when) return `When ${verb} ${s} ${next}?`
  }
  return null
})
on(english, ["takes", "take", "lasts", "last"], (s, verb, rest) =>
  timeUnit.test(rest.join(" ")) ? `How long ${does(verb)} ${s} ${verb.replace(/s$/, "")}?` : null)
on(english, ["costs", "cost"], (s, verb, rest) => (amount.test(rest.join(" ")) ? `How much ${does(verb)} ${s} cost?` : null))
on(english, ["opens", "open", "closes", "close"], (s, verb, rest) =>
  /^(?:at|from|on|every|daily|until)$/i.test(rest[0] ?? "") && clock.test(rest.join(" ")) ? `When ${does(verb)} ${s} ${verb.replace(/s$/, "")}?` : null)
on(english, ["starts", "start", "begins", "begin", "ends", "end"], (s, verb, rest) =>
  /^(?:on|in|at|from)$/i.test(rest[0] ?? "") && (date.test(rest.join(" ")) || clock.test(rest.join(" ")))
    ? `When ${does(verb)} ${s} ${verb.replace(/s$/, "")}?`
    : null)
on(english, ["includes", "include"], (s, verb) => `What ${does(verb)} ${s} include?`)
on(english, ["requires", "require"], (s, verb) => `What ${does(verb)} ${s} require?`)
on(english, ["means", "mean"], (s, verb) => `What ${does(verb)} ${s} mean?`)

on(spanish, ["es", "son"], (s, verb, rest) => {
  const next = low(rest[0] ?? "")
  if (/^(?:un|una|unos|unas)$/.test(next)) return `¿Qué ${verb} ${s}?`
  if (/^(?:gratis|gratuito|gratuita|gratuitos|gratuitas|obligatorio|obligatoria|opcional|reembolsable)$/.test(next)) return `¿${verb === "es" ? "Es" : "Son"} ${s} ${next}?`
  return null
})
on(spanish, ["tarda", "tardan", "dura", "duran"], (s, verb, rest) => (timeUnit.test(rest.join(" ")) ? `¿Cuánto ${verb} ${s}?` : null))
on(spanish, ["cuesta", "cuestan", "vale", "valen"], (s, verb, rest) => (amount.test(rest.join(" ")) ? `¿Cuánto ${verb} ${s}?` : null))
on(spanish, ["abre", "abren", "cierra", "cierran"], (s, verb, rest) =>
  /^(?:a|de|desde|los|el|todos|cada|hasta)$/i.test(rest[0] ?? "") && clock.test(rest.join(" ")) ? `¿Cuándo ${verb} ${s}?` : null)
on(spanish, ["empieza", "empiezan", "comienza", "comienzan", "termina", "terminan"], (s, verb, rest) =>
  /^(?:el|en|a|desde)$/i.test(rest[0] ?? "") && (date.test(rest.join(" ")) || clock.test(rest.join(" "))) ? `¿Cuándo ${verb} ${s}?` : null)
on(spanish, ["incluye", "incluyen"], (s, verb) => `¿Qué ${verb} ${s}?`)
on(spanish, ["requiere", "requieren"], (s, verb) => `¿Qué ${verb} ${s}?`)
on(spanish, ["está", "están"], (s, verb, rest) => {
  const next = rest[0] ?? ""
  if (low(next) === "en" && /^\p{Lu}/u.test(rest[1] ?? "")) return `¿Dónde ${verb} ${s}?`
  if (/^abiert[oa]s?$/i.test(next) && clock.test(rest.join(" "))) return `¿Cuándo ${verb} ${next.toLowerCase()} ${s}?`
  return null
})

// "La factura se envía por correo": how it is done
on(spanish, ["se"], (s, _verb, rest) => {
  const [verb, how] = [rest[0] ?? "", low(rest[1] ?? "")]
  return /^\p{Ll}{3,}(?:a|e|an|en)$/u.test(verb) && /^(?:por|con|desde|mediante|online)$/.test(how) ? `¿Cómo se ${verb} ${s}?` : null
})

/** "You can X" / "Puedes X": the visitor's "Can I X?" / "¿Puedo X?". */
const canI = (parts: ReadonlyArray<string>, isSpanish: boolean): string | null => {
  if (isSpanish) {
    const at = parts.findIndex((w) => /^(?:puedes|puede|pueden|podéis)$/i.test(w))
    if (at < 0 || at > 2) return null
    const who = parts.slice(0, at).join(" ")
    if (at > 0 && !visitors.test(who)) return null
    if (at === 0 && low(parts[0]!) === "pueden") return null
    const rest = visitorRest(parts.slice(at + 1), true)
    return rest === null || !/^\p{Ll}+r(?:se|la|lo|las|los|le|les)?$/u.test(rest.split(" ")[0]!) ? null : `¿Puedo ${rest}?`
  }
  const at = parts.findIndex((w) => /^(?:can|may|cannot|can't)$/i.test(w))
  if (at !== 1 || !visitors.test(parts[0]!)) return null
  const rest = visitorRest(parts.slice(at + 1), false)
  return rest === null || /^(?:not|only)$/i.test(rest.split(" ")[0]!) ? null : `Can I ${rest}?`
}

/**
 * The question a visitor would ask that `sentence` answers, or null when no
 * rule applies cleanly. `common` tells whether the document writes a word in
 * lower case somewhere, so a capitalised first word is a name or not.
 */
export const question = (sentence: string, isSpanish: boolean, common: (word: string) => boolean): string | null => {
  const text = sentence.trim()
  // a whole sentence: capital first, a full stop or exclamation last
  if (!/^\p{Lu}/u.test(text) || !/[.!]$/.test(text) || text.length > 300) return null
  const parts = text.replace(/[.!]+$/, "").split(/\s+/)
  const asked = canI(parts, isSpanish)
  if (asked !== null) return asked
  const table = isSpanish ? spanish : english
  const at = parts.findIndex((w, i) => i > 0 && Object.hasOwn(table, low(w)))
  if (at < 0) return null
  const subject = subjectOf(parts.slice(0, at))
  if (subject === null) return null
  const verb = low(parts[at]!)
  return table[verb]!(phrase(subject, isSpanish, common), verb, parts.slice(at + 1))
}

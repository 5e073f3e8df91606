/**
 * Replies: (1) the service's overhead to the first token with the `local`
 * model, against a bare node:http handler writing the same events
 * (scripts/bench/baseline-sse.ts), as a ratio of median times, one message at a
 * time and `REPLIES_CONCURRENT` at once (p50 and p95 of the first and the last
 * token), on a `pro` workspace (no monthly reply cap); (2) open
 * streams held at once, with the server's RSS: the service (on PGlite) with an
 * `openai` provider pointed at a fake model in this process that sends one
 * token and then stays silent, against the baseline holding as many streams.
 */
import { randomBytes } from "node:crypto"
import { writeFile } from "node:fs/promises"
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import {
  type Child,
  cpuMs,
  createAgent,
  fmt,
  host,
  median,
  noRateLimit,
  percentile,
  proWorkspace,
  ratio,
  rssMb,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  spawnTracked,
  tempDir,
  withServer
} from "./lib.js"

const samples = Number(process.env["REPLIES_SAMPLES"] ?? 100)
const openStreams = Number(process.env["REPLIES_STREAMS"] ?? 500)
const concurrent = Number(process.env["REPLIES_CONCURRENT"] ?? 100)
const concurrentRounds = 3
export const question = "How long does delivery take?"

interface Timed {
  /** ms from sending the request to the first `token` event. */
  readonly firstToken: number
  /** ms from sending the request to the end of the body (the first token's when held). */
  readonly lastToken: number
  readonly body: string
}

/** What marks a reply's first token in the messages endpoint's events. */
const messagesToken = '"type":"token"'
/** And in the completions endpoint's chunks (the first chunk's delta is the role, with empty content). */
const completionsToken = '"delta":{"content":'

/** One streamed POST over node:http without keep-alive; resolves at the end of the body (or at the first token when `hold`). */
export const post = (url: string, token: string, body: string, hold = false, marker = messagesToken): Promise<Timed> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    let firstToken = -1
    let text = ""
    const req = request(
      url,
      { method: "POST", agent: false, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          return reject(new Error(`POST ${url}: ${res.statusCode}`))
        }
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
          if (firstToken < 0 && text.includes(marker)) {
            firstToken = performance.now() - started
            if (hold) resolve({ firstToken, lastToken: firstToken, body: text })
          }
        })
        res.on("end", () => resolve({ firstToken, lastToken: performance.now() - started, body: text }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

export const addQa = async (base: string, token: string, agentId: string) => {
  const res = await fetch(`${base}/v1/agents/${agentId}/qa`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ question, answer: "Orders arrive within five business days anywhere in Europe." }),
    signal: AbortSignal.timeout(30_000)
  })
  if (res.status !== 201) throw new Error(`POST qa: ${res.status} ${await res.text()}`)
}

const firstTokens = async (url: string, token: string) => {
  const body = JSON.stringify({ message: question })
  for (let i = 0; i < 10; i++) await post(url, token, body)
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) times.push((await post(url, token, body)).firstToken)
  return median(times)
}

/** `concurrent` messages sent at once, `concurrentRounds` times after a warm-up round: p50 and p95 of both times. */
const concurrentTokens = async (url: string, token: string, pid: number) => {
  const body = JSON.stringify({ message: question })
  const round = () => Promise.all(Array.from({ length: concurrent }, () => post(url, token, body)))
  await round()
  const timed: Array<Timed> = []
  // the server's CPU time (all its threads: PGlite's too) a reply: other work on the machine stretches the
  // times above, much less this
  const cpuBefore = cpuMs(pid)
  for (let i = 0; i < concurrentRounds; i++) timed.push(...(await round()))
  const cpuPerReply = (cpuMs(pid) - cpuBefore) / (concurrentRounds * concurrent)
  const first = timed.map((t) => t.firstToken)
  const last = timed.map((t) => t.lastToken)
  return {
    firstP50: percentile(first, 50),
    firstP95: percentile(first, 95),
    lastP50: percentile(last, 50),
    lastP95: percentile(last, 95),
    cpuPerReply
  }
}

/**
 * The completions endpoint beside the messages endpoint on one server, the same question to the same agent:
 * rounds of `concurrent` at once, alternating (after a warm-up round of each), so the machine's load falls on
 * both alike; the server's CPU a reply and the first token's p50 and p95 of each.
 */
const completionsBeside = async (base: string, token: string, agentId: string, pid: number) => {
  const sides = {
    messages: { url: `${base}/v1/agents/${agentId}/messages`, body: JSON.stringify({ message: question }), marker: messagesToken },
    completions: {
      url: `${base}/v1/chat/completions`,
      body: JSON.stringify({ model: agentId, messages: [{ role: "user", content: question }], stream: true }),
      marker: completionsToken
    }
  }
  const timed = { messages: [] as Array<Timed>, completions: [] as Array<Timed> }
  const cpu = { messages: 0, completions: 0 }
  const round = (side: keyof typeof sides) =>
    Promise.all(Array.from({ length: concurrent }, () => post(sides[side].url, token, sides[side].body, false, sides[side].marker)))
  await round("messages")
  await round("completions")
  for (let i = 0; i < concurrentRounds; i++) {
    for (const side of ["messages", "completions"] as const) {
      const before = cpuMs(pid)
      timed[side].push(...(await round(side)))
      cpu[side] += cpuMs(pid) - before
    }
  }
  const of = (side: keyof typeof sides) => {
    const first = timed[side].map((t) => t.firstToken)
    return {
      firstP50: percentile(first, 50),
      firstP95: percentile(first, 95),
      cpuPerReply: cpu[side] / (concurrentRounds * concurrent)
    }
  }
  return { messages: of("messages"), completions: of("completions") }
}

/** An OpenAI-compatible fake: constant embeddings, and chat streams that send one token and hold. */
const fakeModel = async () => {
  const held: Array<() => void> = []
  const server: Server = createServer((req, res) => {
    let raw = ""
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")))
    req.on("end", () => {
      const body = JSON.parse(raw)
      if (req.url === "/v1/embeddings") {
        const inputs: Array<string> = Array.isArray(body.input) ? body.input : [body.input]
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(
          JSON.stringify({
            object: "list",
            model: body.model,
            data: inputs.map((_, index) => ({ object: "embedding", index, embedding: Array.from({ length: 1536 }, (_, i) => (i === 0 ? 1 : 0)) })),
            usage: { prompt_tokens: 1, total_tokens: 1 }
          })
        )
      }
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: "Orders" } }] })}\n\n`)
      held.push(() => res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: " arrive." } }] })}\n\ndata: [DONE]\n\n`))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/v1`,
    release: () => held.splice(0).forEach((end) => end()),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/** Opens `openStreams` streams at once, waits for each one's first token, and reads the server's RSS. */
const holdStreams = async (url: string, token: string, child: Child) => {
  const idle = rssMb(child.pid)
  const body = JSON.stringify({ message: question })
  const started = performance.now()
  const opened = await Promise.all(Array.from({ length: openStreams }, () => post(url, token, body, true)))
  const allOpenMs = performance.now() - started
  await sleep(1_000)
  const held = rssMb(child.pid)
  console.log(`    ${openStreams} streams open in ${fmt(allOpenMs)} ms; RSS ${fmt(idle)} MB idle, ${fmt(held)} MB holding them`)
  return { idle, held, allOpenMs, opened: opened.length }
}

export const replies = async (): Promise<Section> => {
  const dir = await tempDir("replies")
  const adminToken = randomBytes(24).toString("hex")
  const framesFile = join(dir, "frames.json")

  console.log("  first token: service (PGlite, local model)")
  const service = await withServer(
    (port) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: join(dir, "local"), ADMIN_TOKEN: adminToken, ...noRateLimit })),
    async (base, child) => {
      // the Free plan caps replies at 100 a month, the sandbox too: a `pro` workspace has no cap
      const { token } = await proWorkspace(base, adminToken, "Replies bench")
      const agentId = await createAgent(base, token)
      await addQa(base, token, agentId)
      const url = `${base}/v1/agents/${agentId}/messages`
      const sample = await post(url, token, JSON.stringify({ message: question }))
      const frames = sample.body.split("\n\n").filter((f) => f.startsWith("id:")).map((f) => `${f}\n\n`)
      await writeFile(framesFile, JSON.stringify(frames))
      const ms = await firstTokens(url, token)
      console.log(`    ${concurrent} at once, ${concurrentRounds} rounds`)
      const together = await concurrentTokens(url, token, child.pid)
      console.log(`    the completions endpoint beside the messages endpoint: ${concurrent} at once, ${concurrentRounds} rounds each, alternating`)
      const beside = await completionsBeside(base, token, agentId, child.pid)
      return { ms, events: frames.length, token, together, beside }
    }
  )
  console.log(`    median ${fmt(service.ms, 2)} ms to the first token (${service.events} events a reply)`)
  console.log(`    ${concurrent} at once: first token p50 ${fmt(service.together.firstP50, 1)} / p95 ${fmt(service.together.firstP95, 1)} ms`)

  const { messages: msgs, completions: chat } = service.beside
  console.log(
    `    messages: CPU ${fmt(msgs.cpuPerReply, 2)} ms a reply, first token p95 ${fmt(msgs.firstP95, 1)} ms; ` +
      `completions: CPU ${fmt(chat.cpuPerReply, 2)} ms, p95 ${fmt(chat.firstP95, 1)} ms ` +
      `(${ratio(chat.cpuPerReply, msgs.cpuPerReply)}, ${ratio(chat.firstP95, msgs.firstP95)})`
  )

  console.log("  first token: baseline node:http")
  const baseline = await withServer(
    (port) => spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/baseline-sse.ts"], { ...process.env, PORT: String(port), REPLY_FRAMES_FILE: framesFile }),
    async (base, child) => {
      const url = `${base}/v1/agents/agt_baseline/messages`
      return { ms: await firstTokens(url, "none"), together: await concurrentTokens(url, "none", child.pid) }
    }
  )
  console.log(`    median ${fmt(baseline.ms, 2)} ms`)

  console.log(`  ${openStreams} open streams: service (PGlite, fake openai model that falls silent)`)
  const model = await fakeModel()
  let serviceHeld
  try {
    serviceHeld = await withServer(
      (port) =>
        spawnService(
          serviceEnv({
            PORT: String(port),
            DATA_DIR: join(dir, "openai"),
            AI_PROVIDER: "openai",
            AI_BASE_URL: model.url,
            AI_API_KEY: "bench",
            ADMIN_TOKEN: adminToken,
            ...noRateLimit
          })
        ),
      async (base, child) => {
        const { token } = await proWorkspace(base, adminToken, "Replies bench")
        const agentId = await createAgent(base, token)
        await addQa(base, token, agentId)
        const result = await holdStreams(`${base}/v1/agents/${agentId}/messages`, token, child)
        model.release()
        await sleep(2_000)
        return result
      }
    )
  } finally {
    await model.close()
  }

  console.log(`  ${openStreams} open streams: baseline node:http`)
  const baselineHeld = await withServer(
    (port) =>
      spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/baseline-sse.ts"], {
        ...process.env,
        PORT: String(port),
        REPLY_FRAMES_FILE: framesFile,
        HOLD: "1"
      }),
    async (base, child) => holdStreams(`${base}/v1/agents/agt_baseline/messages`, "none", child)
  )

  return {
    title: `Replies: first token (${samples} sequential streamed messages, median; ${concurrent} at once, p50/p95) and ${openStreams} streams held open at once`,
    lines: [
      "| measure | service | baseline node:http | service vs baseline |",
      "|---|---:|---:|---:|",
      `| ms to first token (local model, PGlite) | ${fmt(service.ms, 2)} | ${fmt(baseline.ms, 2)} | ${ratio(service.ms, baseline.ms)} |`,
      ...(
        [
          ["first token p50", "firstP50"],
          ["first token p95", "firstP95"],
          ["last token p50", "lastP50"],
          ["last token p95", "lastP95"]
        ] as const
      ).map(
        ([label, key]) =>
          `| ms to ${label}, ${concurrent} at once | ${fmt(service.together[key], 1)} | ${fmt(baseline.together[key], 1)} | +${fmt(service.together[key] - baseline.together[key], 1)} ms |`
      ),
      `| server CPU ms a reply, ${concurrent} at once | ${fmt(service.together.cpuPerReply, 2)} | ${fmt(baseline.together.cpuPerReply, 2)} | ${ratio(service.together.cpuPerReply, baseline.together.cpuPerReply)} |`,
      `| ms until ${openStreams} streams all had a token | ${fmt(serviceHeld.allOpenMs)} | ${fmt(baselineHeld.allOpenMs)} | ${ratio(serviceHeld.allOpenMs, baselineHeld.allOpenMs)} |`,
      `| RSS MB idle | ${fmt(serviceHeld.idle)} | ${fmt(baselineHeld.idle)} | |`,
      `| RSS MB holding ${openStreams} streams | ${fmt(serviceHeld.held)} | ${fmt(baselineHeld.held)} | |`,
      `| RSS KB per open stream | ${fmt(((serviceHeld.held - serviceHeld.idle) * 1024) / openStreams)} | ${fmt(((baselineHeld.held - baselineHeld.idle) * 1024) / openStreams)} | |`,
      "",
      `The completions endpoint (\`POST /v1/chat/completions\`, streamed) beside the messages endpoint, on the same server, ${concurrent} at once, ${concurrentRounds} rounds each, alternating:`,
      "",
      "| measure | messages | completions | completions vs messages |",
      "|---|---:|---:|---:|",
      `| server CPU ms a reply | ${fmt(msgs.cpuPerReply, 2)} | ${fmt(chat.cpuPerReply, 2)} | ${ratio(chat.cpuPerReply, msgs.cpuPerReply)} |`,
      `| ms to first token p50 | ${fmt(msgs.firstP50, 1)} | ${fmt(chat.firstP50, 1)} | ${ratio(chat.firstP50, msgs.firstP50)} |`,
      `| ms to first token p95 | ${fmt(msgs.firstP95, 1)} | ${fmt(chat.firstP95, 1)} | ${ratio(chat.firstP95, msgs.firstP95)} |`,
      "",
      "The service's first token includes authentication, the rate limit, storing the message and opening the",
      "conversation (one transaction with its event and idle job), retrieval (embedding and two searches) and the",
      "reply's own fiber; the baseline writes the captured events with no work at all, so the ratio is the whole",
      "server-side cost of a reply up to its first token."
    ]
  }
}

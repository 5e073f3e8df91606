/**
 * Helpers of the suite that runs the bundle: `dist/` built once (only when a
 * source is newer than it), copied outside the project, and started as
 * `node server.mjs` like an operator would; the bundled admin CLI; plain HTTP
 * calls; an independent SSE reader (`eventsource-parser`); loopback peers
 * (pages, webhook receivers, stand-in APIs); bounded polling.
 *
 * With DATABASE_URL set every service gets a throwaway PostgreSQL database on
 * that server; otherwise PGlite in its own data dir.
 */
import { execFile, execFileSync } from "node:child_process"
import { cp, mkdtemp, rm } from "node:fs/promises"
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { createParser } from "eventsource-parser"
import {
  type Child,
  cleanupAll,
  freePort,
  host,
  onCleanup,
  repoRoot,
  serviceEnv,
  spawnTracked,
  stop,
  throwawayDatabase,
  waitForOk
} from "../../scripts/bench/lib.js"
import { bundleIsStale } from "../../scripts/freshness.mjs"

export { cleanupAll, freePort, host }

export const databaseUrl = process.env["DATABASE_URL"]
export const redisUrl = process.env["REDIS_URL"]
export const databaseName = databaseUrl === undefined ? "PGlite" : "PostgreSQL"

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// The bundle

let copied: string | undefined

/**
 * Builds `dist/` when it is missing or older than a source (the build takes
 * about 30 s), then copies it to a temporary folder outside the project, so
 * nothing resolves from the project's own `node_modules`. Once per test file.
 */
export const bundleCopy = async (): Promise<string> => {
  if (copied !== undefined) return copied
  if (bundleIsStale(repoRoot, join(repoRoot, "dist/server.mjs"))) {
    try {
      execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: repoRoot, stdio: "pipe", timeout: 240_000 })
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? "")
      throw new Error(`npm run build failed:\n${stderr.slice(-3000)}`)
    }
  }
  const dir = await mkdtemp(join(tmpdir(), "dist-e2e-"))
  onCleanup(() => rm(dir, { recursive: true, force: true }))
  await cp(join(repoRoot, "dist"), join(dir, "app"), { recursive: true })
  copied = join(dir, "app")
  return copied
}

/**
 * `DIST_LOADS_DIR` (set by `.ci/run`): every process started from the bundle records the files it loads there
 * (its `DIST_LOADS_FILE`, written by `recordLoads.mjs`), and `scripts/distLoads.mjs` then names the chunks no
 * flow loaded. The CLI records into its service's file.
 */
const loadsDir = process.env["DIST_LOADS_DIR"]
const recorder = loadsDir === undefined ? [] : ["--import", pathToFileURL(join(repoRoot, "test/dist/recordLoads.mjs")).href]

/** Timeout of a `beforeAll` that may build: the build (up to 240 s) plus a start. */
export const setupTimeout = 330_000

export const adminToken = "dist-e2e-admin-token-0123456789abcdef"

/** `OWNER_EMAIL` of every service unless given: the owner of the workspace made at the first start. */
export const defaultOwnerEmail = "owner@dist-e2e.test"

export interface Service {
  readonly base: string
  readonly port: number
  readonly env: NodeJS.ProcessEnv
  readonly child: Child
  /** What the process wrote so far (stdout and stderr). */
  readonly output: () => string
}

/**
 * `node server.mjs` from the copy on a free port with `extra` in its environment
 * (inherited environment minus DATABASE_URL and REDIS_URL, which are set here
 * only when asked for; a DATABASE_URL in `extra` is used as it is). Resolves once `/readyz` answers 200.
 */
export const startService = async (extra: Record<string, string> = {}, options: { readonly redis?: string } = {}): Promise<Service> => {
  const app = await bundleCopy()
  const port = await freePort()
  const dataDir = await mkdtemp(join(tmpdir(), "dist-e2e-data-"))
  onCleanup(() => rm(dataDir, { recursive: true, force: true }))
  const vars: Record<string, string> = {
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    AI_PROVIDER: "local",
    ALLOW_PRIVATE_URLS: "true",
    OWNER_EMAIL: defaultOwnerEmail,
    LOG_LEVEL: "info",
    ...extra
  }
  // a DATABASE_URL given in `extra` is shared on purpose (several instances of one database)
  if (databaseUrl !== undefined && extra["DATABASE_URL"] === undefined) {
    vars["DATABASE_URL"] = await throwawayDatabase({ serverUrl: databaseUrl, prefix: "dist_e2e" })
  }
  const env = serviceEnv(vars)
  if (options.redis !== undefined) env["REDIS_URL"] = options.redis
  if (loadsDir !== undefined) env["DIST_LOADS_FILE"] = join(loadsDir, `${port}-${Date.now()}.txt`)
  const child = spawnTracked(process.execPath, [...recorder, "server.mjs"], env, app)
  await waitForOk(`http://${host}:${port}/readyz`, child, performance.now())
  return { base: `http://${host}:${port}`, port, env, child, output: child.output }
}

export const stopService = (service: Service) => stop(service.child)

/** Exit code, stdout and stderr of `node cli.mjs <args>` run from the copy against `service`. */
export const runCli = async (
  service: Service,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }> => {
  const app = await bundleCopy()
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [...recorder, "cli.mjs", ...args],
      { cwd: app, env: { ...service.env, ...env }, timeout: 90_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  )
}

/** `node cli.mjs <args> --json`, parsed; throws with stderr on a failure. */
export const cliJson = async (service: Service, args: ReadonlyArray<string>): Promise<any> => {
  const result = await runCli(service, [...args, "--json"])
  if (result.code !== 0) throw new Error(`cli ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

export interface Workspace {
  readonly id: string
  readonly ownerEmail: string
  /** `sk_test_…` with every secret scope. */
  readonly secret: string
}

/**
 * The `default` workspace a first start on an empty database creates, with the
 * sandbox keys it prints once (no CLI start needed: each costs seconds on a busy machine).
 */
export const bootstrapWorkspace = async (service: Service): Promise<Workspace & { readonly forms: string }> => {
  const printed = await eventually(
    async () => service.output(),
    (out) => /forms key\s+pk_test_\w+/.test(out),
    { label: "bootstrap keys printed", tries: 100, intervalMs: 50, timeoutMs: 10_000 }
  )
  const id = /Created workspace "default" \((ws_\w+)/.exec(printed)?.[1]
  const secret = /secret key\s+(sk_test_\w+)/.exec(printed)?.[1]
  const forms = /forms key\s+(pk_test_\w+)/.exec(printed)?.[1]
  if (id === undefined || secret === undefined || forms === undefined) throw new Error(`no bootstrap keys in:\n${printed.slice(-2000)}`)
  return { id, ownerEmail: service.env["OWNER_EMAIL"] ?? defaultOwnerEmail, secret, forms }
}

// HTTP

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

const toReply = async (response: Response): Promise<Reply> => {
  const text = await response.text()
  let body: unknown = null
  try {
    body = text === "" ? null : JSON.parse(text)
  } catch {
    body = null
  }
  return { status: response.status, headers: response.headers, text, body }
}

/** One request with a bearer key (unless `key` is undefined); JSON in and out. */
export const call = async (
  service: Service,
  method: string,
  path: string,
  options: { readonly key?: string; readonly body?: unknown; readonly headers?: Record<string, string>; readonly base?: string } = {}
): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${options.base ?? service.base}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(30_000)
  })
  return toReply(response)
}

/** `call`, and the status must be `status` (the body is in the message otherwise). */
export const expectCall = async (
  service: Service,
  method: string,
  path: string,
  status: number,
  options: Parameters<typeof call>[3] = {}
): Promise<any> => {
  const reply = await call(service, method, path, options)
  if (reply.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${reply.status}: ${reply.text.slice(0, 500)}`)
  return reply.body
}

/** Declares a file, uploads its bytes, confirms it; its id. */
export const uploadFile = async (service: Service, key: string, filename: string, contentType: string, bytes: Uint8Array) => {
  const declared = await expectCall(service, "POST", "/v1/files", 201, {
    key,
    body: { filename, content_type: contentType, size_bytes: bytes.length }
  })
  const id = declared.data.id as string
  const put = await fetch(`${service.base}/v1/files/${id}/content`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": contentType },
    body: new Uint8Array(bytes),
    signal: AbortSignal.timeout(30_000)
  })
  if (put.status !== 200) throw new Error(`PUT /v1/files/${id}/content: ${put.status} ${await put.text()}`)
  await expectCall(service, "POST", `/v1/files/${id}/confirm`, 200, { key })
  return id
}

// Polling

/**
 * Calls `read` until `done` holds for its value: at most `tries` times and
 * `timeoutMs` in all, `intervalMs` apart. Throws with the last value otherwise.
 */
export const eventually = async <A>(
  read: () => Promise<A>,
  done: (a: A) => boolean,
  options: { readonly label: string; readonly tries?: number; readonly intervalMs?: number; readonly timeoutMs?: number }
): Promise<A> => {
  const tries = options.tries ?? 600
  const deadline = performance.now() + (options.timeoutMs ?? 60_000)
  let last: A | undefined
  for (let i = 0; i < tries && performance.now() < deadline; i++) {
    last = await read()
    if (done(last)) return last
    await sleep(options.intervalMs ?? 100)
  }
  throw new Error(`${options.label}: not reached after ${options.tries ?? 600} tries; last: ${JSON.stringify(last)?.slice(0, 2000)}`)
}

// Server-sent events, read by an independent parser

export interface SseEvent {
  readonly id: string | undefined
  readonly data: any
}

export interface SseReply {
  readonly status: number
  readonly contentType: string
  readonly events: ReadonlyArray<SseEvent>
  /** The body when it was not an event stream (an error envelope). */
  readonly text: string
}

/** Reads an event stream with `eventsource-parser` to its end, or drops the connection once `stopWhen` holds. */
export const readSse = async (
  url: string,
  options: {
    readonly key: string
    readonly body?: unknown
    readonly headers?: Record<string, string>
    readonly stopWhen?: (events: ReadonlyArray<SseEvent>) => boolean
  }
): Promise<SseReply> => {
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), 60_000)
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key}`, accept: "text/event-stream", ...options.headers }
    if (options.body !== undefined) headers["content-type"] = "application/json"
    const response = await fetch(url, {
      method: options.body === undefined ? "GET" : "POST",
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: abort.signal
    })
    const contentType = response.headers.get("content-type") ?? ""
    if (!contentType.startsWith("text/event-stream")) {
      return { status: response.status, contentType, events: [], text: await response.text() }
    }
    const events: Array<SseEvent> = []
    let stopped = false
    const parser = createParser({
      onEvent: (event) => {
        if (stopped) return
        events.push({ id: event.id, data: JSON.parse(event.data) })
        if (options.stopWhen?.(events)) stopped = true
      }
    })
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    while (!stopped) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(value)
    }
    if (stopped) abort.abort()
    return { status: response.status, contentType, events, text: "" }
  } finally {
    clearTimeout(timer)
  }
}

export const eventTypes = (events: ReadonlyArray<SseEvent>) => events.map((e) => e.data.type as string)

export const tokenText = (events: ReadonlyArray<SseEvent>) =>
  events
    .filter((e) => e.data.type === "token")
    .map((e) => e.data.content as string)
    .join("")

// Loopback peers

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface Peer {
  readonly origin: string
  readonly received: Array<Received>
  readonly close: () => Promise<void>
}

/**
 * An HTTP server on 127.0.0.1 and a random port: each request's body is read
 * whole and recorded, then `answer` writes the response. Closed by `closePeers`.
 */
export const startPeer = (answer: (request: Received, res: ServerResponse, req: IncomingMessage) => void): Promise<Peer> =>
  new Promise((resolve, reject) => {
    const received: Array<Received> = []
    const server: Server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const request = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          at: Date.now()
        }
        received.push(request)
        answer(request, res, req)
      })
    })
    server.once("error", reject)
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo
      const close = () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      onCleanup(close)
      resolve({ origin: `http://${host}:${port}`, received, close })
    })
  })

export const sendJson = (res: ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(value))
}

export const sendHtml = (res: ServerResponse, body: string, status = 200) => {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" })
  res.end(body)
}

/** An HTML page with navigation, an article of sections and a footer. */
export const htmlPage = (title: string, sections: ReadonlyArray<readonly [string, string]>) =>
  `<!doctype html><html><head><title>${title}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>${title}</h1>
${sections.map(([heading, text]) => `<h2>${heading}</h2>\n<p>${text}</p>`).join("\n")}
</article><footer>Copyright Example Shop</footer></body></html>`

/**
 * A support agent "Harbour shop" whose one source, "Opening hours", is indexed: what the suites of the protocols
 * built on the agents (completions, MCP) ask about.
 */
export const harbourShop = async (service: Service, ws: Workspace): Promise<{ readonly agentId: string; readonly sourceId: string }> => {
  const hours =
    "The shop on Harbour Street opens from nine in the morning to five in the afternoon, Monday to Saturday. " +
    "On Sundays the shop is closed; parcels can be collected at the counter during opening hours."
  const agentId = (await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "support", name: "Harbour shop" } }))
    .data.id as string
  const sourceId = (
    await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge`, 201, {
      key: ws.secret,
      body: { type: "text", title: "Opening hours", content: hours }
    })
  ).data.id as string
  await eventually(
    () => expectCall(service, "GET", `/v1/agents/${agentId}/knowledge/${sourceId}`, 200, { key: ws.secret }),
    (body) => body.data.status === "indexed",
    { label: "the source indexed", timeoutMs: 60_000 }
  )
  return { agentId, sourceId }
}

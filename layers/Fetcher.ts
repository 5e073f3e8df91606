/**
 * Outbound HTTP to URLs our customers chose: POSTs to webhook receivers and
 * GETs of pages to ingest. Live: `node:http`/`node:https` directly, hardened
 * against SSRF. Test: handler functions, so callers are tested without sockets.
 *
 * `post` and `get` never fail: whatever the server does (answers, refuses,
 * hangs, presents a bad certificate) is a result, data for the caller.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import * as https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { StringDecoder } from "node:string_decoder"
import * as zlib from "node:zlib"
import { bareHostname, isLocalhostName, isPublicAddress } from "./fetcher/Addresses.js"
import { type Resolver, systemResolver } from "./fetcher/Lookup.js"

export interface PostRequest {
  readonly url: string
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  /** The whole exchange: resolve, connect, TLS, send, status line and body excerpt. */
  readonly timeoutMillis: number
  /** `ALLOW_PRIVATE_URLS=true`: let loopback, private and link-local addresses through. */
  readonly allowPrivate: boolean
}

export type FailureReason = "timeout" | "dns" | "tls" | "connect" | "private_address" | "other"

export interface PostResponse {
  readonly _tag: "Response"
  /** Any status, 3xx included: redirects are never followed. */
  readonly status: number
  /** The first `EXCERPT_BYTES` bytes of the body, decoded as UTF-8 (a split trailing character is dropped). */
  readonly bodyExcerpt: string
  readonly durationMillis: number
}

export interface PostFailure {
  readonly _tag: "Failure"
  readonly reason: FailureReason
  readonly message: string
  readonly durationMillis: number
}

export type PostResult = PostResponse | PostFailure

export interface GetRequest {
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  /** The whole fetch, redirects included. */
  readonly timeoutMillis: number
  /** Bodies beyond this are cut off and reported as `too_large` (counted as they arrive). */
  readonly maxBytes: number
  readonly allowPrivate: boolean
  /** Redirects followed, each target checked like the first URL (default 5). */
  readonly maxRedirects?: number
  /** `live` environments: a redirect to plain `http:` is refused. */
  readonly httpsOnly?: boolean
  /** A redirect to another origin is not followed: it is the failure `off_origin` (a crawl keeps to its site). */
  readonly keepOrigin?: boolean
}

/** `encoding`: the body is encoded in a way the fetcher does not read (a `Content-Encoding` other than gzip, deflate, br). */
export type GetFailureReason = FailureReason | "too_large" | "redirect" | "encoding" | "off_origin"

export interface GetResponse {
  readonly _tag: "Response"
  readonly status: number
  /** Lowercased media type without parameters (`text/html`), or "" when absent. */
  readonly contentType: string
  readonly body: Uint8Array
  /** The URL that answered, after redirects. */
  readonly url: string
  /** The response's `ETag` and `Last-Modified`, for a later conditional GET (`If-None-Match`, `If-Modified-Since`). */
  readonly etag?: string | undefined
  readonly lastModified?: string | undefined
}

export interface GetFailure {
  readonly _tag: "Failure"
  readonly reason: GetFailureReason
  readonly message: string
}

export type GetResult = GetResponse | GetFailure

export interface FetcherShape {
  readonly post: (request: PostRequest) => Effect.Effect<PostResult>
  readonly get: (request: GetRequest) => Effect.Effect<GetResult>
}

export class Fetcher extends Context.Tag("Layers/Fetcher")<Fetcher, FetcherShape>() {}

/** How much of a response body is kept (1 KiB); the rest is never read. */
export const EXCERPT_BYTES = 1024

/** A `Response` result, for test handlers. */
export const response = (status: number, bodyExcerpt = "", durationMillis = 0): PostResult => ({
  _tag: "Response",
  status,
  bodyExcerpt,
  durationMillis
})

/** A `Failure` result, for test handlers. */
export const failure = (reason: FailureReason, message: string = reason, durationMillis = 0): PostResult => ({
  _tag: "Failure",
  reason,
  message,
  durationMillis
})

// Live: node:http / node:https

type Outcome =
  | { readonly _tag: "Response"; readonly status: number; readonly bodyExcerpt: string }
  | { readonly _tag: "Failure"; readonly reason: FailureReason; readonly message: string }

const fail = (reason: FailureReason, message: string): Outcome => ({ _tag: "Failure", reason, message })

/** Raised by the connect-time lookup; recognised by class when the request errors. */
class PrivateAddressError extends Error {
  readonly code = "ERR_PRIVATE_ADDRESS"
  constructor(host: string) {
    super(`${host} resolves to a private, loopback or link-local address`)
  }
}

/**
 * The socket's resolver: `resolve` (the system's, with a deadline: `fetcher/Lookup.ts`), then every
 * address must be public unless `allowPrivate`. Running at connect time, it
 * closes the window between `checkUrl` and the connection in which DNS could
 * start answering with an internal address (rebinding). Node calls it with
 * `all: true` when it races address families (`autoSelectFamily`), without
 * otherwise; both shapes of answer are honoured.
 */
const guardedLookup =
  (allowPrivate: boolean, resolve: Resolver): LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "")
      if (addresses.length === 0) {
        const notFound: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: "ENOTFOUND",
          syscall: "getaddrinfo"
        })
        return callback(notFound, "")
      }
      if (!allowPrivate && !addresses.every((a) => isPublicAddress(a.address))) {
        return callback(new PrivateAddressError(hostname), "")
      }
      if (options.all) return callback(null, [...addresses])
      const first = addresses[0]!
      return callback(null, first.address, first.family)
    })
  }

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "ENODATA", "ESERVFAIL"])
const connectCodes = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "ETIMEDOUT"
])
const tlsCodes = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "HOSTNAME_MISMATCH",
  "EPROTO"
])

interface Progress {
  readonly tls: boolean
  connected: boolean
  secured: boolean
}

type NodeError = Error & { code?: unknown; syscall?: unknown; library?: unknown; errors?: unknown }

const classify = (error: unknown, progress: Progress): FailureReason => {
  if (error instanceof PrivateAddressError) return "private_address"
  let err = error as NodeError
  // with several addresses Node may report an AggregateError of the attempts
  if (err.code === undefined && Array.isArray(err.errors) && err.errors.length > 0) err = err.errors[0] as NodeError
  if (err instanceof PrivateAddressError) return "private_address"
  const code = typeof err.code === "string" ? err.code : ""
  if (err.syscall === "getaddrinfo" || dnsCodes.has(code)) return "dns"
  if (
    progress.tls &&
    (tlsCodes.has(code) ||
      code.startsWith("ERR_TLS_") ||
      code.startsWith("ERR_SSL_") ||
      code.startsWith("CERT_") ||
      (typeof err.library === "string" && err.library.includes("SSL")))
  ) {
    return "tls"
  }
  if (connectCodes.has(code)) return "connect"
  if (code === "ECONNRESET" || code === "EPIPE") {
    if (!progress.connected) return "connect"
    if (progress.tls && !progress.secured) return "tls"
  }
  return "other"
}

const messageOf = (error: unknown): string => {
  const err = error as NodeError
  const text = (err instanceof Error && err.message !== "" ? err.message : String(error)).trim()
  return typeof err.code === "string" && !text.includes(err.code) ? `${err.code}: ${text}` : text
}

/** How long a kept-alive connection to a receiver may sit idle (less when the server's `Keep-Alive` hint says so). */
const idleSocketMillis = 4_000

/**
 * Kept-alive connections (to a webhook's receiver, a crawled site), one pool
 * per policy (`allowPrivate` false or true) and scheme, made on first use. A
 * pooled socket was opened through that policy's connect-time lookup, to an
 * address it allowed, and stays connected to that address: reusing it skips no
 * check that could now answer otherwise (a DNS change only reaches new
 * connections, which are checked). Node's agent closes an idle socket before
 * the server's announced keep-alive timeout, so a reused one has rarely been
 * closed by the other end meanwhile.
 */
const pools = new WeakMap<Resolver, Map<string, http.Agent>>()
const pooledAgent = (isTls: boolean, allowPrivate: boolean, resolve: Resolver): http.Agent => {
  const name = `${isTls ? "https" : "http"}:${allowPrivate}`
  let resolverPools = pools.get(resolve)
  if (resolverPools === undefined) {
    resolverPools = new Map()
    pools.set(resolve, resolverPools)
  }
  let agent = resolverPools.get(name)
  if (agent === undefined) {
    const options = { keepAlive: true, timeout: idleSocketMillis, maxFreeSockets: 32, lookup: guardedLookup(allowPrivate, resolve) }
    agent = isTls ? new https.Agent(options) : new http.Agent(options)
    resolverPools.set(name, agent)
  }
  return agent
}

/**
 * A reused socket that fails before any answer was most likely closed by the
 * server while idle, as the request left: it goes once more, on a new
 * connection. (Should a webhook's receiver have read it and dropped the
 * connection, it gets the delivery twice, which at-least-once delivery allows.)
 */
const staleSocketCodes = new Set(["ECONNRESET", "EPIPE"])

/** Whether `error`, of a request before any answer came, is a pooled socket gone stale (see above). */
const staleSocket = (sent: http.ClientRequest, pooled: boolean, answered: boolean, error: unknown) => {
  const code = (error as NodeError).code
  return pooled && sent.reusedSocket && !answered && typeof code === "string" && staleSocketCodes.has(code)
}

/**
 * Sends a request on the policy's pool (`pooledAgent`, names checked by `guardedLookup`), its connection watched
 * (`trackConnection`) and its errors handled: none once `live(sent)` is false (settled, or replaced by its retry);
 * a stale pooled socket's request sent once more on a new connection (`sent` gets each request as it goes, for
 * the caller's teardown); any other error `failed`, with the reason how far its connection got tells (a header
 * Node refuses throws at once: "other").
 */
const sendPooled = (
  url: URL,
  request: {
    readonly method: "GET" | "POST"
    readonly headers: http.OutgoingHttpHeaders
    readonly body?: string
    readonly allowPrivate: boolean
    readonly resolve: Resolver
  },
  handlers: {
    readonly sent: (sent: http.ClientRequest) => void
    readonly live: (sent: http.ClientRequest) => boolean
    readonly answered: () => boolean
    readonly response: (incoming: http.IncomingMessage) => void
    readonly failed: (reason: FailureReason, message: string) => void
  }
) => {
  const tls = url.protocol === "https:"
  const send = (pooled: boolean) => {
    let sent: http.ClientRequest
    try {
      sent = (tls ? https : http).request(url, {
        method: request.method,
        headers: request.headers,
        // the retry after a stale socket opens a new connection of its own (through the same lookup)
        agent: pooled ? pooledAgent(tls, request.allowPrivate, request.resolve) : false,
        lookup: guardedLookup(request.allowPrivate, request.resolve)
      })
    } catch (error) {
      return handlers.failed("other", messageOf(error))
    }
    handlers.sent(sent)
    const progress: Progress = { tls, connected: false, secured: false }
    trackConnection(sent, progress)
    sent.on("error", (error) => {
      if (!handlers.live(sent)) return
      if (staleSocket(sent, pooled, handlers.answered(), error)) {
        sent.destroy()
        return send(false)
      }
      handlers.failed(classify(error, progress), messageOf(error))
    })
    sent.on("response", handlers.response)
    sent.end(request.body)
  }
  send(true)
}

/** A literal loopback, private or link-local host (names are checked at connect time, by `guardedLookup`), or none. */
const privateLiteral = (url: URL, allowPrivate: boolean): string | undefined => {
  if (allowPrivate) return undefined
  // an IP literal never goes through `lookup` (Node connects to it directly), so it is checked here
  const host = bareHostname(url.hostname)
  return isLocalhostName(host) || (isIP(host) !== 0 && !isPublicAddress(host))
    ? `${host} is a private, loopback or link-local address`
    : undefined
}

/** Why a POST may not be sent before any socket opens (a URL that does not parse, its scheme, a private literal). */
const refusedPost = (request: PostRequest): Outcome | URL => {
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return fail("other", "invalid URL")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fail("other", `unsupported protocol ${url.protocol}`)
  const privately = privateLiteral(url, request.allowPrivate)
  return privately === undefined ? url : fail("private_address", privately)
}

/** Records on `progress` how far a request's connection got, for `classify` (a reused socket got all the way). */
const trackConnection = (req: http.ClientRequest, progress: Progress) =>
  req.on("socket", (socket) => {
    if (req.reusedSocket) {
      progress.connected = true
      progress.secured = true
      return
    }
    socket.once("connect", () => {
      progress.connected = true
    })
    socket.once("secureConnect", () => {
      progress.secured = true
    })
  })

/**
 * A POST's answer: its status and the first `EXCERPT_BYTES` of its body. `complete`: the body was read to its
 * end (the socket can serve the next POST); `cut`: the excerpt is full, or the body broke off.
 */
const readExcerpt = (
  incoming: http.IncomingMessage,
  ended: { readonly complete: (outcome: Outcome) => void; readonly cut: (outcome: Outcome) => void }
) => {
  const status = incoming.statusCode ?? 0
  const chunks: Array<Buffer> = []
  let size = 0
  incoming.on("data", (chunk: Buffer) => {
    const room = EXCERPT_BYTES - size
    if (room <= 0) return
    if (chunk.length < room) {
      chunks.push(chunk)
      size += chunk.length
      return
    }
    chunks.push(chunk.subarray(0, room))
    size = EXCERPT_BYTES
    // a character cut at the 1 KiB mark is dropped rather than shown as U+FFFD
    ended.cut({ _tag: "Response", status, bodyExcerpt: new StringDecoder("utf8").write(Buffer.concat(chunks)) })
  })
  incoming.on("end", () => ended.complete({ _tag: "Response", status, bodyExcerpt: Buffer.concat(chunks).toString("utf8") }))
  incoming.on("error", (error) => ended.cut(fail("other", `response body interrupted: ${messageOf(error)}`)))
  incoming.on("close", () => {
    if (!incoming.complete) ended.cut(fail("other", "connection closed before the response body ended"))
  })
}

/**
 * Runs one POST and calls `done` exactly once. Returns a canceller for
 * interruption. The connection comes from the policy's pool (`pooledAgent`); a
 * response read to its end leaves it there for the next request, anything else
 * (an excerpt cut short, a failure, a timeout, interruption) destroys it.
 */
const exchange = (request: PostRequest, resolve: Resolver, done: (outcome: Outcome) => void): (() => void) => {
  let settled = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let req: http.ClientRequest | undefined
  let res: http.IncomingMessage | undefined
  const teardown = () => {
    if (timer !== undefined) clearTimeout(timer)
    res?.destroy()
    req?.destroy()
  }
  const finish = (outcome: Outcome) => {
    if (settled) return
    settled = true
    teardown()
    done(outcome)
  }
  // the whole body was read: the socket goes back to the pool, untouched
  const finishComplete = (outcome: Outcome) => {
    if (settled) return
    settled = true
    if (timer !== undefined) clearTimeout(timer)
    done(outcome)
  }
  // on interruption: tear down without reporting the errors the teardown itself causes
  const cancel = () => {
    settled = true
    teardown()
  }

  const url = refusedPost(request)
  if (!(url instanceof URL)) {
    finish(url)
    return cancel
  }
  // The deadline is a real timer, not Effect's Clock: the socket is real even
  // when a TestClock drives the rest of the program, and a TestClock that
  // nobody advances would let a hung receiver hold the delivery forever.
  // It covers the whole exchange, including a receiver that accepts the
  // connection and never answers, or answers the status line and stalls.
  const timeoutMillis = Math.max(0, request.timeoutMillis)
  timer = setTimeout(() => {
    const stage = res !== undefined ? `status ${res.statusCode} received, body not completed` : "no response"
    finish(fail("timeout", `timed out after ${timeoutMillis} ms (${stage})`))
  }, timeoutMillis)

  sendPooled(
    url,
    {
      method: "POST",
      headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
      body: request.body,
      allowPrivate: request.allowPrivate,
      resolve
    },
    {
      sent: (sent) => {
        req = sent
      },
      live: (sent) => !settled && req === sent,
      answered: () => res !== undefined,
      response: (incoming) => {
        res = incoming
        readExcerpt(incoming, { complete: finishComplete, cut: finish })
      },
      failed: (reason, message) => finish(fail(reason, message))
    }
  )
  return cancel
}

/** Why a URL may not be fetched before any socket opens (scheme, literal private address), or none. */
const refusedBeforeConnect = (url: URL, allowPrivate: boolean): GetFailure | undefined => {
  const refuse = (reason: GetFailureReason, message: string): GetFailure => ({ _tag: "Failure", reason, message })
  if (url.protocol !== "https:" && url.protocol !== "http:") return refuse("other", `unsupported protocol ${url.protocol}`)
  if (url.username !== "" || url.password !== "") return refuse("other", "credentials in URLs are not sent")
  const privately = privateLiteral(url, allowPrivate)
  return privately === undefined ? undefined : refuse("private_address", privately)
}

type GetOutcome = GetResult | { readonly _tag: "Redirect"; readonly location: string }

/** The stream that decodes a response's `Content-Encoding` (none for `identity`); "unknown" for one not read. */
const decoderFor = (encoding: string) => {
  switch (encoding) {
    case "identity":
    case "":
      return undefined
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip()
    case "deflate":
      return zlib.createInflate()
    case "br":
      return zlib.createBrotliDecompress()
    default:
      return "unknown" as const
  }
}

/**
 * A response body gathered as it arrives. With its length declared (and no content decoding), each chunk is
 * copied into one buffer of that length as it comes, so a body of tens of megabytes costs no single copy of
 * its whole size on the main thread at its end; otherwise the chunks are joined once. A body longer than it
 * declared is joined from its pieces.
 */
const bodyCollector = (declared: number | undefined) => {
  const whole = declared !== undefined && declared > 0 ? Buffer.allocUnsafe(declared) : undefined
  // the pieces, once the body is not (or no longer) gathered in `whole`
  let chunks: Array<Buffer> | undefined = whole === undefined ? [] : undefined
  let size = 0
  return {
    get size() {
      return size
    },
    add: (chunk: Buffer) => {
      if (chunks === undefined && size + chunk.length <= whole!.length) chunk.copy(whole!, size)
      else (chunks ??= [whole!.subarray(0, size)]).push(chunk)
      size += chunk.length
    },
    bytes: (): Uint8Array => {
      const joined = chunks === undefined ? whole!.subarray(0, size) : Buffer.concat(chunks, size)
      return new Uint8Array(joined.buffer, joined.byteOffset, joined.length)
    }
  }
}

/**
 * One GET hop: a response, a redirect to follow, or a failure; `done` is called exactly once. The connection comes
 * from the policy's pool, as a POST's does (`exchange`): a body read to its end leaves it there for the site's next
 * page, anything else destroys it.
 */
const getHop = (
  url: URL,
  request: GetRequest,
  deadline: number,
  resolve: Resolver,
  done: (outcome: GetOutcome) => void
): (() => void) => {
  let settled = false
  let req: http.ClientRequest | undefined
  let res: http.IncomingMessage | undefined
  let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined
  const timer = setTimeout(
    () => finish({ _tag: "Failure", reason: "timeout", message: `timed out after ${request.timeoutMillis} ms` }),
    Math.max(0, deadline - performance.now())
  )
  const teardown = () => {
    clearTimeout(timer)
    decoder?.destroy()
    res?.destroy()
    req?.destroy()
  }
  function finish(outcome: GetOutcome) {
    if (settled) return
    settled = true
    teardown()
    done(outcome)
  }
  // the whole body was read: the socket goes back to the pool, untouched
  const finishComplete = (outcome: GetOutcome) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    done(outcome)
  }
  const refused = refusedBeforeConnect(url, request.allowPrivate)
  if (refused !== undefined) {
    finish(refused)
    return () => {}
  }
  const read = (incoming: http.IncomingMessage) => {
    res = incoming
    const status = incoming.statusCode ?? 0
    const location = incoming.headers.location
    if (status >= 300 && status < 400 && location !== undefined) return finish({ _tag: "Redirect", location })
    const declared = Number(incoming.headers["content-length"] ?? NaN)
    const tooLarge = () =>
      finish({ _tag: "Failure", reason: "too_large", message: `the response is larger than ${request.maxBytes} bytes` })
    if (declared > request.maxBytes) return tooLarge()
    const contentType = (incoming.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    const encoding = (incoming.headers["content-encoding"] ?? "identity").trim().toLowerCase()
    const decoded = decoderFor(encoding)
    if (decoded === "unknown") {
      return finish({ _tag: "Failure", reason: "encoding", message: `the response is encoded as ${encoding}, which is not read` })
    }
    // the limit counts what the page inflates to: a few kilobytes of gzip may hold gigabytes
    decoder = decoded
    const body = decoder === undefined ? incoming : incoming.pipe(decoder)
    const collected = bodyCollector(decoder === undefined && Number.isSafeInteger(declared) ? declared : undefined)
    body.on("data", (chunk: Buffer) => {
      if (collected.size + chunk.length > request.maxBytes) return tooLarge()
      collected.add(chunk)
    })
    body.on("end", () =>
      finishComplete({
        _tag: "Response",
        status,
        contentType,
        body: collected.bytes(),
        url: url.href,
        etag: incoming.headers.etag,
        lastModified: incoming.headers["last-modified"]
      })
    )
    decoder?.on("error", () => finish({ _tag: "Failure", reason: "other", message: `the response's ${encoding} encoding is broken` }))
    incoming.on("error", (error) =>
      finish({ _tag: "Failure", reason: "other", message: `response body interrupted: ${messageOf(error)}` })
    )
    incoming.on("close", () => {
      if (!incoming.complete) finish({ _tag: "Failure", reason: "other", message: "connection closed before the body ended" })
    })
  }
  sendPooled(
    url,
    {
      method: "GET",
      headers: {
        "user-agent": "assistant-platform-ingest/1",
        accept: "text/html,text/plain,application/pdf;q=0.9,*/*;q=0.1",
        "accept-encoding": "gzip, deflate, br",
        ...request.headers
      },
      allowPrivate: request.allowPrivate,
      resolve
    },
    {
      sent: (sent) => {
        req = sent
      },
      live: (sent) => !settled && req === sent,
      answered: () => res !== undefined,
      response: read,
      failed: (reason, message) => finish({ _tag: "Failure", reason, message })
    }
  )
  return () => {
    settled = true
    teardown()
  }
}

/**
 * GET with redirects followed by hand: each target is parsed against the
 * previous URL and goes through the same checks as the first (scheme, literal
 * address, then the connect-time lookup), so a public page cannot bounce the
 * fetch to an internal address. The deadline is a real timer (see `exchange`).
 */
const get = (resolve: Resolver) => (request: GetRequest): Effect.Effect<GetResult> =>
  Effect.gen(function* () {
    const deadline = performance.now() + Math.max(0, request.timeoutMillis)
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      return { _tag: "Failure", reason: "other", message: "invalid URL" } as const
    }
    const maxRedirects = request.maxRedirects ?? 5
    for (let hop = 0; ; hop++) {
      const outcome = yield* Effect.async<GetOutcome>((resume) => {
        const cancel = getHop(url, request, deadline, resolve, (o) => resume(Effect.succeed(o)))
        return Effect.sync(cancel)
      })
      if (outcome._tag !== "Redirect") return outcome
      if (hop >= maxRedirects) {
        return { _tag: "Failure", reason: "redirect", message: `more than ${maxRedirects} redirects` } as const
      }
      try {
        url = new URL(outcome.location, url)
      } catch {
        return { _tag: "Failure", reason: "redirect", message: "a redirect named an invalid URL" } as const
      }
      if (request.httpsOnly === true && url.protocol !== "https:") {
        return { _tag: "Failure", reason: "redirect", message: "a redirect left https" } as const
      }
      if (request.keepOrigin === true && url.origin !== new URL(request.url).origin) {
        return { _tag: "Failure", reason: "off_origin", message: `a redirect left the site for ${url.origin}` } as const
      }
    }
  })

const post = (resolve: Resolver) => (request: PostRequest): Effect.Effect<PostResult> =>
  Effect.gen(function* () {
    // Duration comes from Effect's Clock like all time in the service (zero under an idle TestClock).
    const started = yield* Clock.currentTimeMillis
    const outcome = yield* Effect.async<Outcome>((resume) => {
      const cancel = exchange(request, resolve, (o) => resume(Effect.succeed(o)))
      return Effect.sync(cancel)
    })
    const ended = yield* Clock.currentTimeMillis
    const durationMillis = Math.max(0, ended - started)
    return outcome._tag === "Response" ? { ...outcome, durationMillis } : { ...outcome, durationMillis }
  })

/**
 * Real network through `node:http`/`node:https`, names resolved by `resolve` (a test hands one that never
 * answers, with a short deadline); SSRF checks at connect time; connections kept alive, per resolver.
 */
export const layerNodeWith = (resolve: Resolver): Layer.Layer<Fetcher> =>
  Layer.succeed(Fetcher, { post: post(resolve), get: get(resolve) })

/** Real network, names resolved by the system with a deadline (`fetcher/Lookup.ts`). */
export const layerNode: Layer.Layer<Fetcher> = layerNodeWith(systemResolver)

// Test

/**
 * Answers every POST with `handler` (a result, or an Effect of one, e.g. to wait
 * on the TestClock) and every GET with `getHandler` (by default: the real network).
 */
export const layerTest = (
  handler: (request: PostRequest) => PostResult | Effect.Effect<PostResult>,
  getHandler: (request: GetRequest) => GetResult | Effect.Effect<GetResult> = get(systemResolver)
): Layer.Layer<Fetcher> =>
  Layer.succeed(Fetcher, {
    post: (request) =>
      Effect.suspend(() => {
        const result = handler(request)
        return Effect.isEffect(result) ? result : Effect.succeed(result)
      }),
    get: (request) =>
      Effect.suspend(() => {
        const result = getHandler(request)
        return Effect.isEffect(result) ? result : Effect.succeed(result)
      })
  })

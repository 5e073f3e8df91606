/**
 * Name resolution with a deadline. `dns.lookup` (getaddrinfo, on libuv's thread pool) has none: a resolver that
 * never answers would hold a fetch, and a URL check, for as long as the system's resolver configuration lets it
 * (minutes with several unreachable name servers). Every lookup here ends by `DNS_LOOKUP_TIMEOUT_MILLIS`, as the
 * failure `dns` of that fetch.
 */
import * as dns from "node:dns"

/** Resolves every address of a name, in the callback shape of `dns.lookup` with `all: true`. */
export type Resolver = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: ReadonlyArray<dns.LookupAddress>) => void
) => void

/**
 * How long one lookup may take: a healthy resolver answers in milliseconds, and a cold one going through its
 * retries to a second name server within a couple of seconds; past five seconds the answer is not coming in time
 * for a fetch whose whole budget is ten or twenty.
 */
export const DNS_LOOKUP_TIMEOUT_MILLIS = 5_000

/** Whether `error` is a lookup this module gave up on. */
export const isLookupTimeout = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === "ETIMEOUT"

const timedOut = (hostname: string, timeoutMillis: number): NodeJS.ErrnoException =>
  Object.assign(new Error(`DNS lookup of ${hostname} timed out after ${timeoutMillis} ms`), {
    code: "ETIMEOUT",
    syscall: "getaddrinfo",
    hostname
  })

/**
 * `resolve`, answering at the latest after `timeoutMillis` with an `ETIMEOUT` error (a real timer: the lookup is
 * on a real thread whatever clock drives the program), with at most `maxInFlight` lookups running at once; the
 * others wait their turn within their own deadline. A lookup cannot be cancelled: one given up on still holds a
 * thread of libuv's pool (shared with file reads and writes, the database's included) until the system resolver
 * returns, so a silent resolver may take `maxInFlight` threads, never the whole pool. A late answer is dropped.
 */
export const withTimeout = (resolve: Resolver, timeoutMillis: number, maxInFlight = Number.POSITIVE_INFINITY): Resolver => {
  let inFlight = 0
  const waiting: Array<() => void> = []
  const startNext = () => {
    while (inFlight < maxInFlight && waiting.length > 0) waiting.shift()!()
  }
  return (hostname, options, callback) => {
    let settled = false
    const settle = (error: NodeJS.ErrnoException | null, addresses: ReadonlyArray<dns.LookupAddress>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      callback(error, addresses)
    }
    const start = () => {
      inFlight++
      resolve(hostname, options, (error, addresses) => {
        inFlight--
        startNext()
        settle(error, addresses)
      })
    }
    const timer = setTimeout(() => {
      const queued = waiting.indexOf(start)
      if (queued >= 0) waiting.splice(queued, 1)
      settle(timedOut(hostname, timeoutMillis), [])
    }, timeoutMillis)
    // a lookup left pending must not keep the process alive
    timer.unref()
    if (inFlight < maxInFlight) start()
    else waiting.push(start)
  }
}

/** The system resolver, what Node itself would use (no deadline of its own). */
export const systemLookup: Resolver = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/** System lookups running at once: half of libuv's pool (4 threads unless `UV_THREADPOOL_SIZE` says otherwise). */
const systemMaxInFlight = Math.max(1, Math.floor((Number(process.env["UV_THREADPOOL_SIZE"]) || 4) / 2))

/** The system resolver with the deadline and the bound on lookups at once (shared by every fetch and URL check). */
export const systemResolver: Resolver = withTimeout(systemLookup, DNS_LOOKUP_TIMEOUT_MILLIS, systemMaxInFlight)

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

/**
 * `resolve`, answering at the latest after `timeoutMillis` with an `ETIMEOUT` error (a real timer: the lookup is
 * on a real thread whatever clock drives the program). The lookup itself cannot be cancelled; a late answer is
 * dropped.
 */
export const withTimeout =
  (resolve: Resolver, timeoutMillis: number): Resolver =>
  (hostname, options, callback) => {
    let settled = false
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      const error: NodeJS.ErrnoException = Object.assign(
        new Error(`DNS lookup of ${hostname} timed out after ${timeoutMillis} ms`),
        { code: "ETIMEOUT", syscall: "getaddrinfo", hostname }
      )
      callback(error, [])
    }, timeoutMillis)
    // a lookup left pending must not keep the process alive
    timer.unref()
    resolve(hostname, options, (error, addresses) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      callback(error, addresses)
    })
  }

/** The system resolver, what Node itself would use (no deadline of its own). */
export const systemLookup: Resolver = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/** The system resolver with the deadline. */
export const systemResolver: Resolver = withTimeout(systemLookup, DNS_LOOKUP_TIMEOUT_MILLIS)

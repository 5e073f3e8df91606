/**
 * Which outbound URLs the service may call: webhook receivers and ingested
 * knowledge URLs alike.
 *
 * - only `http:` and `https:`, without credentials (`ParameterInvalid`);
 * - `https:` only in the `live` environment (`UrlNotAllowed`);
 * - unless `allowPrivate` (`ALLOW_PRIVATE_URLS=true`, dev and tests), no host
 *   that is, or resolves to, a loopback, private, link-local or otherwise
 *   non-public address, and no `localhost` names (`UrlNotAllowed`).
 *
 * This check runs when a URL is accepted. DNS may answer differently later
 * (rebinding), so the fetcher checks the resolved address again at connect
 * time (`layers/Fetcher.ts`), with the same `isPublicAddress`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { LookupAddress } from "node:dns"
import { isIP } from "node:net"
import { ParameterInvalid, UrlNotAllowed } from "../../schema/Errors.js"
import { bareHostname, isLocalhostName, isPublicAddress } from "../../layers/fetcher/Addresses.js"
import { DNS_LOOKUP_TIMEOUT_MILLIS, type Resolver, systemResolver } from "../../layers/fetcher/Lookup.js"

export { bareHostname, isLocalhostName, isPublicAddress }

export interface UrlPolicyOptions {
  readonly environment: "test" | "live"
  /** `ALLOW_PRIVATE_URLS=true`: skip the address checks (and DNS resolution) entirely. */
  readonly allowPrivate: boolean
  /** The request parameter the URL came from, echoed in the failure's `param`. */
  readonly param: string
  /** How names are resolved (default: the system's, shared with the fetcher); a test hands one that never answers. */
  readonly resolve?: Resolver
}

type Resolved = { readonly _tag: "Addresses"; readonly addresses: ReadonlyArray<LookupAddress> } | { readonly _tag: "TimedOut" }

/** Every address of `host`, none when it does not resolve, or `TimedOut` after `DNS_LOOKUP_TIMEOUT_MILLIS` by the Clock. */
const resolveHost = (host: string, resolve: Resolver): Effect.Effect<Resolved> =>
  Effect.async<Resolved>((resume) => {
    resolve(host, { all: true }, (error, addresses) =>
      resume(Effect.succeed({ _tag: "Addresses", addresses: error === null ? addresses : [] }))
    )
  }).pipe(
    Effect.timeoutTo({
      duration: Duration.millis(DNS_LOOKUP_TIMEOUT_MILLIS),
      onSuccess: (resolved): Resolved => resolved,
      onTimeout: (): Resolved => ({ _tag: "TimedOut" })
    })
  )

/**
 * Parses and vets an outbound URL. Resolves the host through the system
 * resolver (`dns.lookup`, as the HTTP client will; given up after
 * `DNS_LOOKUP_TIMEOUT_MILLIS` by the Clock) when it is a name and
 * private addresses are not allowed; every address it resolves to must be
 * public. Failure messages name the literal address when the caller wrote it,
 * never an address DNS returned (that would map internal names for a caller).
 */
export const checkUrl = (
  raw: string,
  options: UrlPolicyOptions
): Effect.Effect<URL, UrlNotAllowed | ParameterInvalid> =>
  Effect.gen(function* () {
    const { param } = options
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return yield* new ParameterInvalid({ message: `${param} is not a valid URL.`, param })
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return yield* new ParameterInvalid({
        message: `${param} must be an http or https URL (got "${url.protocol}").`,
        param
      })
    }
    if (url.username !== "" || url.password !== "") {
      return yield* new ParameterInvalid({
        message: `${param} must not contain credentials (user:password@).`,
        param
      })
    }
    if (options.environment === "live" && url.protocol !== "https:") {
      return yield* new UrlNotAllowed({ message: `${param} must use https in live mode.`, param })
    }
    if (options.allowPrivate) return url

    const host = bareHostname(url.hostname)
    if (isLocalhostName(host)) {
      return yield* new UrlNotAllowed({
        message: `${param} must not point to a local host name ("${host}").`,
        param
      })
    }
    if (isIP(host) !== 0) {
      if (!isPublicAddress(host)) {
        return yield* new UrlNotAllowed({
          message: `${param} must not point to a private, loopback or link-local address (${host}).`,
          param
        })
      }
      return url
    }
    const resolved = yield* resolveHost(host, options.resolve ?? systemResolver)
    if (resolved._tag === "TimedOut") {
      return yield* new UrlNotAllowed({
        message: `${param} host "${host}" could not be resolved: DNS did not answer within ${DNS_LOOKUP_TIMEOUT_MILLIS / 1000} seconds.`,
        param
      })
    }
    const { addresses } = resolved
    if (addresses.length === 0) {
      return yield* new UrlNotAllowed({ message: `${param} host "${host}" could not be resolved.`, param })
    }
    if (!addresses.every((a) => isPublicAddress(a.address))) {
      return yield* new UrlNotAllowed({
        message: `${param} host "${host}" resolves to a private, loopback or link-local address.`,
        param
      })
    }
    return url
  })

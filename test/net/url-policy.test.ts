import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { vi } from "vitest"
import { DNS_LOOKUP_TIMEOUT_MILLIS, type Resolver } from "../../layers/fetcher/Lookup.js"
import { ParameterInvalid, UrlNotAllowed } from "../../schema/Errors.js"
import { bareHostname, checkUrl, isLocalhostName, isPublicAddress } from "../../src/net/UrlPolicy.js"

// A few fixed names, so the "resolves to" branch is tested without a network;
// every other name goes to the real resolver (`.invalid` never resolves).
const { fixtures, lookups } = vi.hoisted(() => ({
  fixtures: {
    "public.fixture.example": [{ address: "93.184.216.34", family: 4 }],
    "public6.fixture.example": [
      { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
      { address: "93.184.216.34", family: 4 }
    ],
    "internal.fixture.example": [{ address: "10.0.0.5", family: 4 }],
    "metadata.fixture.example": [{ address: "169.254.169.254", family: 4 }],
    "loopback6.fixture.example": [{ address: "::1", family: 6 }],
    "mixed.fixture.example": [
      { address: "93.184.216.34", family: 4 },
      { address: "192.168.1.10", family: 4 }
    ],
    "empty.fixture.example": []
  } as Record<string, ReadonlyArray<{ address: string; family: number }>>,
  lookups: [] as Array<string>
}))

vi.mock("node:dns", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns")>()
  const lookup = (host: string, options: object, callback: (error: unknown, addresses: unknown) => void) => {
    lookups.push(host)
    const fixed = fixtures[host]
    return fixed !== undefined ? queueMicrotask(() => callback(null, fixed)) : actual.lookup(host, { ...options, all: true }, callback)
  }
  return { ...actual, lookup, default: { ...actual, lookup } }
})

const test = { environment: "test", allowPrivate: false, param: "url" } as const
const live = { environment: "live", allowPrivate: false, param: "url" } as const

describe("isPublicAddress", () => {
  const nonPublicV4 = [
    ["0.0.0.0", "this network"],
    ["0.255.255.255", "this network, top"],
    ["10.0.0.0", "10/8"],
    ["10.1.2.3", "10/8"],
    ["10.255.255.255", "10/8, top"],
    ["100.64.0.0", "CGNAT"],
    ["100.100.100.100", "CGNAT"],
    ["100.127.255.255", "CGNAT, top"],
    ["127.0.0.1", "loopback"],
    ["127.0.0.0", "loopback, bottom"],
    ["127.255.255.255", "loopback, top"],
    ["169.254.0.0", "link-local"],
    ["169.254.169.254", "cloud metadata"],
    ["169.254.255.255", "link-local, top"],
    ["172.16.0.0", "172.16/12"],
    ["172.20.1.1", "172.16/12"],
    ["172.31.255.255", "172.16/12, top"],
    ["192.0.0.0", "192.0.0/24"],
    ["192.0.0.170", "192.0.0/24 (NAT64 discovery)"],
    ["192.0.0.255", "192.0.0/24, top"],
    ["192.168.0.0", "192.168/16"],
    ["192.168.1.1", "192.168/16"],
    ["192.168.255.255", "192.168/16, top"],
    ["198.18.0.0", "benchmarking"],
    ["198.19.255.255", "benchmarking, top"],
    ["224.0.0.0", "multicast"],
    ["224.0.0.251", "mDNS"],
    ["239.255.255.255", "multicast, top"],
    ["240.0.0.0", "reserved"],
    ["250.1.2.3", "reserved"],
    ["255.255.255.254", "reserved"],
    ["255.255.255.255", "broadcast"]
  ] as const
  it.each(nonPublicV4)("IPv4 %s (%s) is not public", (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })

  const publicV4 = [
    "1.0.0.0",
    "1.1.1.1",
    "8.8.8.8",
    "9.255.255.255",
    "11.0.0.0",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "191.255.255.255",
    "192.0.1.0",
    "192.0.2.1",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255"
  ]
  it.each(publicV4)("IPv4 %s is public", (ip) => {
    expect(isPublicAddress(ip)).toBe(true)
  })

  const nonPublicV6 = [
    ["::", "unspecified"],
    ["0:0:0:0:0:0:0:0", "unspecified, long form"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback, long form"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex (as the URL parser writes it)"],
    ["::FFFF:10.1.2.3", "IPv4-mapped private, upper case"],
    ["0:0:0:0:0:ffff:c0a8:101", "IPv4-mapped 192.168.1.1, long form"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
    ["::ffff:0.0.0.0", "IPv4-mapped this-network"],
    ["64:ff9b::10.0.0.1", "NAT64 of a private v4"],
    ["64:ff9b::7f00:1", "NAT64 of loopback, hex"],
    ["64:ff9b::a9fe:a9fe", "NAT64 of metadata, hex"],
    ["::127.0.0.1", "IPv4-compatible (deprecated)"],
    ["::8.8.8.8", "IPv4-compatible (deprecated), even of a public v4"],
    ["::2", "inside ::/96"],
    ["fc00::", "unique local, bottom"],
    ["fc00::1", "unique local"],
    ["fd12:3456:789a::1", "unique local"],
    ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local, top"],
    ["fe80::", "link-local, bottom"],
    ["fe80::1", "link-local"],
    ["FE80::1234:5678", "link-local, upper case"],
    ["fe80::1%eth0", "link-local with a zone id"],
    ["febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local, top"],
    ["fec0::1", "site-local (deprecated)"],
    ["ff00::", "multicast, bottom"],
    ["ff02::1", "all nodes"],
    ["ff0e::1", "global multicast"],
    ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast, top"]
  ] as const
  it.each(nonPublicV6)("IPv6 %s (%s) is not public", (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })

  const publicV6 = [
    "2001:4860:4860::8888",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82b::200e",
    "2606:2800:220:1:248:1893:25c8:1946",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "64:ff9b::8.8.8.8",
    "64:ff9b::5db8:d822",
    "fbff:ffff::1",
    "1::1",
    "::1:0:0:0:1"
  ]
  it.each(publicV6)("IPv6 %s is public", (ip) => {
    expect(isPublicAddress(ip)).toBe(true)
  })

  const notAddresses = [
    "",
    "localhost",
    "example.com",
    "256.1.1.1",
    "1.2.3",
    "1.2.3.4.5",
    "010.0.0.1",
    "0x7f.0.0.1",
    "2130706433",
    "[::1]",
    ":::",
    "1:2:3:4:5:6:7:8:9",
    "gggg::1",
    " 8.8.8.8"
  ]
  it.each(notAddresses)("%j is not an address, so not public (fail closed)", (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })
})

describe("host names", () => {
  it.each([
    ["localhost", true],
    ["LOCALHOST", true],
    ["localhost.", true],
    ["api.localhost", true],
    ["a.b.localhost", true],
    ["localhost.com", false],
    ["mylocalhost", false],
    ["localhost.example.com", false]
  ] as const)("isLocalhostName(%s) is %s", (host, expected) => {
    expect(isLocalhostName(host)).toBe(expected)
  })

  it("bareHostname strips IPv6 brackets and the trailing dot, and lowercases", () => {
    expect(bareHostname("[::1]")).toBe("::1")
    expect(bareHostname("Example.COM.")).toBe("example.com")
    expect(bareHostname("8.8.8.8")).toBe("8.8.8.8")
  })
})

describe("checkUrl", () => {
  const refused = (raw: string, options: Parameters<typeof checkUrl>[1] = test) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(checkUrl(raw, options))
      expect(error).toBeInstanceOf(UrlNotAllowed)
      expect(error.param).toBe(options.param)
      return error.message
    })
  const invalid = (raw: string, options: Parameters<typeof checkUrl>[1] = test) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(checkUrl(raw, options))
      expect(error).toBeInstanceOf(ParameterInvalid)
      expect(error.param).toBe(options.param)
      return error.message
    })

  it.effect("returns the parsed URL of an allowed public address", () =>
    Effect.gen(function* () {
      const url = yield* checkUrl("https://93.184.216.34/hooks?x=1", live)
      expect(url).toBeInstanceOf(URL)
      expect(url.href).toBe("https://93.184.216.34/hooks?x=1")
    })
  )

  it.effect("http is allowed in test mode, refused in live mode", () =>
    Effect.gen(function* () {
      expect((yield* checkUrl("http://93.184.216.34/hook", test)).protocol).toBe("http:")
      expect((yield* checkUrl("http://public.fixture.example/hook", test)).hostname).toBe("public.fixture.example")
      expect(yield* refused("http://93.184.216.34/hook", live)).toMatch(/https/)
      // allowPrivate does not lift the https rule
      expect(yield* refused("http://93.184.216.34/hook", { ...live, allowPrivate: true })).toMatch(/https/)
      expect((yield* checkUrl("https://public.fixture.example/hook", live)).protocol).toBe("https:")
    })
  )

  it.effect("loopback literals are refused unless allowPrivate", () =>
    Effect.gen(function* () {
      expect(yield* refused("https://127.0.0.1/hook")).toMatch(/private, loopback or link-local address \(127\.0\.0\.1\)/)
      expect(yield* refused("https://127.0.0.1/hook", live)).toMatch(/loopback/)
      expect((yield* checkUrl("https://127.0.0.1:8443/hook", { ...test, allowPrivate: true })).port).toBe("8443")
      expect((yield* checkUrl("https://127.0.0.1/hook", { ...live, allowPrivate: true })).hostname).toBe("127.0.0.1")
      yield* refused("http://[::1]/hook")
      yield* refused("http://[::1]:3000/")
      yield* refused("http://[0:0:0:0:0:0:0:1]/")
      yield* refused("http://[::ffff:127.0.0.1]/")
      yield* refused("http://[::ffff:7f00:1]/")
      yield* refused("http://0.0.0.0:8080/")
      yield* refused("http://[::]/")
    })
  )

  it.effect("private, link-local and metadata literals are refused", () =>
    Effect.gen(function* () {
      yield* refused("https://10.0.0.1/")
      yield* refused("https://172.16.5.4/")
      yield* refused("https://192.168.0.10/")
      yield* refused("https://100.64.1.1/")
      yield* refused("http://169.254.169.254/latest/meta-data/")
      yield* refused("https://[fe80::1]/")
      yield* refused("https://[fd00::1]/")
      yield* refused("https://[ff02::1]/")
      yield* refused("https://[64:ff9b::10.0.0.1]/")
      yield* refused("https://224.0.0.1/")
      yield* refused("https://255.255.255.255/")
      expect((yield* checkUrl("https://[2001:4860:4860::8888]/", live)).hostname).toBe("[2001:4860:4860::8888]")
      expect((yield* checkUrl("https://[::ffff:8.8.8.8]/", live)).hostname).toBe("[::ffff:808:808]")
    })
  )

  it.effect("odd spellings of 127.0.0.1 are normalized by the URL parser, then refused", () =>
    Effect.gen(function* () {
      expect(new URL("http://0x7f.1").hostname).toBe("127.0.0.1")
      yield* refused("http://0x7f.1")
      expect(new URL("http://2130706433/").hostname).toBe("127.0.0.1")
      yield* refused("http://2130706433/")
      expect(new URL("http://0177.0.0.1/").hostname).toBe("127.0.0.1")
      yield* refused("http://0177.0.0.1/")
      yield* refused("http://127.1/")
    })
  )

  it.effect("localhost names are refused without asking DNS, unless allowPrivate", () =>
    Effect.gen(function* () {
      lookups.length = 0
      expect(yield* refused("https://localhost/hook")).toMatch(/local host name/)
      yield* refused("https://LOCALHOST:8443/hook")
      yield* refused("https://localhost./hook")
      yield* refused("https://api.localhost/hook")
      expect(lookups).toEqual([])
      expect((yield* checkUrl("https://localhost:8443/hook", { ...test, allowPrivate: true })).hostname).toBe("localhost")
    })
  )

  it.effect("names are resolved: every address must be public", () =>
    Effect.gen(function* () {
      expect((yield* checkUrl("https://public6.fixture.example/", live)).hostname).toBe("public6.fixture.example")
      const message = yield* refused("https://internal.fixture.example/")
      expect(message).toMatch(/resolves to a private, loopback or link-local address/)
      // the resolved address is not echoed: it would map internal DNS for the caller
      expect(message).not.toContain("10.0.0.5")
      yield* refused("https://metadata.fixture.example/")
      yield* refused("https://loopback6.fixture.example/")
      yield* refused("https://mixed.fixture.example/")
      // a trailing dot is the same name
      yield* refused("https://internal.fixture.example./")
    })
  )

  it.effect("an unresolvable host is refused", () =>
    Effect.gen(function* () {
      expect(yield* refused("https://nope.invalid/hook")).toMatch(/could not be resolved/)
      expect(yield* refused("https://no-such-host.invalid/hook", live)).toMatch(/"no-such-host\.invalid" could not be resolved/)
      expect(yield* refused("https://empty.fixture.example/")).toMatch(/could not be resolved/)
    })
  )

  it.effect("a resolver that never answers: refused after DNS_LOOKUP_TIMEOUT_MILLIS by the Clock, never a hang", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const silent: Resolver = (host) => void asked.push(host)
      const check = yield* Effect.fork(Effect.flip(checkUrl("https://slow-dns.example/hook", { ...test, resolve: silent })))
      yield* TestClock.adjust(DNS_LOOKUP_TIMEOUT_MILLIS - 1)
      expect(Option.isNone(yield* Fiber.poll(check))).toBe(true)
      yield* TestClock.adjust(1)
      const error = yield* Fiber.join(check)
      expect(error).toBeInstanceOf(UrlNotAllowed)
      expect(error.message).toBe('url host "slow-dns.example" could not be resolved: DNS did not answer within 5 seconds.')
      expect(asked).toEqual(["slow-dns.example"])
      // an answer in time is used as before
      const quick: Resolver = (_host, _options, callback) => callback(null, [{ address: "93.184.216.34", family: 4 }])
      expect((yield* checkUrl("https://quick-dns.example/", { ...test, resolve: quick })).hostname).toBe("quick-dns.example")
    })
  )

  it.effect("allowPrivate skips resolution altogether", () =>
    Effect.gen(function* () {
      lookups.length = 0
      expect((yield* checkUrl("https://internal.fixture.example/", { ...test, allowPrivate: true })).hostname).toBe(
        "internal.fixture.example"
      )
      expect((yield* checkUrl("http://nope.invalid/", { ...test, allowPrivate: true })).hostname).toBe("nope.invalid")
      expect(lookups).toEqual([])
    })
  )

  it.effect("unparsable URLs, other schemes and credentials are ParameterInvalid", () =>
    Effect.gen(function* () {
      expect(yield* invalid("not a url")).toMatch(/not a valid URL/)
      yield* invalid("")
      yield* invalid("example.com/hook")
      yield* invalid("https://")
      yield* invalid("http://[::1/")
      expect(yield* invalid("ftp://example.com/file")).toMatch(/http or https/)
      yield* invalid("file:///etc/passwd")
      yield* invalid("javascript:alert(1)")
      yield* invalid("gopher://127.0.0.1:6379/_INFO")
      yield* invalid("data:text/plain,hello")
      expect(yield* invalid("https://user:pass@example.com/")).toMatch(/credentials/)
      yield* invalid("https://user@example.com/")
      yield* invalid("https://:pass@example.com/")
      // shape errors come before the live https rule, and name the given param
      yield* invalid("http://user:pass@93.184.216.34/", { ...live, param: "webhook.url" })
      yield* invalid("ftp://x", { ...live, allowPrivate: true, param: "sources[3].url" })
    })
  )
})

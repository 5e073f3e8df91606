/**
 * Which IP addresses and host names are public. Shared by the URL policy (when a
 * URL is accepted) and the fetcher (again at connect time, against DNS rebinding).
 */
import { isIP } from "node:net"

/** `a.b.c.d` (strict dotted decimal, as `net.isIP` accepts it) as an unsigned 32-bit number. */
const ipv4ToNumber = (ip: string): number => {
  const [a, b, c, d] = ip.split(".").map(Number) as [number, number, number, number]
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d
}

const v4 = (base: string, prefix: number) => ({ base: ipv4ToNumber(base), prefix })

/** IPv4 ranges that are not public unicast destinations. */
const nonPublicV4 = [
  v4("0.0.0.0", 8), //        "this network"
  v4("10.0.0.0", 8), //       private
  v4("100.64.0.0", 10), //    carrier-grade NAT
  v4("127.0.0.0", 8), //      loopback
  v4("169.254.0.0", 16), //   link-local (cloud metadata lives here)
  v4("172.16.0.0", 12), //    private
  v4("192.0.0.0", 24), //     IETF protocol assignments
  v4("192.168.0.0", 16), //   private
  v4("198.18.0.0", 15), //    benchmarking
  v4("224.0.0.0", 4), //      multicast
  v4("240.0.0.0", 4) //       reserved, up to and including 255.255.255.255 (broadcast)
]

const inV4Range = (n: number, range: { base: number; prefix: number }): boolean => {
  const mask = range.prefix === 0 ? 0 : (~0 << (32 - range.prefix)) >>> 0
  return ((n & mask) >>> 0) === ((range.base & mask) >>> 0)
}

const isPublicV4Number = (n: number): boolean => !nonPublicV4.some((range) => inV4Range(n, range))

/**
 * An IPv6 address (as `net.isIP` accepts it, zone id removed) as 8 groups of
 * 16 bits. A dotted IPv4 tail (`::ffff:1.2.3.4`) becomes the last two groups.
 */
const ipv6ToGroups = (ip: string): ReadonlyArray<number> => {
  let text = ip
  const tail: Array<number> = []
  const lastColon = text.lastIndexOf(":")
  if (text.slice(lastColon + 1).includes(".")) {
    const n = ipv4ToNumber(text.slice(lastColon + 1))
    tail.push(n >>> 16, n & 0xffff)
    // two placeholder groups stand for the dotted tail; keeping the colon lets "::1.2.3.4" split around its "::"
    text = text.slice(0, lastColon + 1) + "0:0"
  }
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)))
  const halves = text.split("::")
  let groups: Array<number>
  if (halves.length === 2) {
    const head = parse(halves[0]!)
    const rest = parse(halves[1]!)
    groups = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest]
  } else {
    groups = parse(text)
  }
  if (tail.length === 2) groups.splice(6, 2, tail[0]!, tail[1]!)
  return groups
}

const isPublicV6 = (ip: string): boolean => {
  const g = ipv6ToGroups(ip)
  if (g.length !== 8) return false
  const first96Zero = g.slice(0, 6).every((x) => x === 0)
  const embeddedV4 = ((g[6]! << 16) >>> 0) + g[7]!
  // ::ffff:a.b.c.d, IPv4-mapped: the socket really talks IPv4 to a.b.c.d
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isPublicV4Number(embeddedV4)
  // 64:ff9b::/96, the well-known NAT64 prefix: a.b.c.d behind the translator
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isPublicV4Number(embeddedV4)
  // ::/96 holds "::" (unspecified), "::1" (loopback) and the deprecated IPv4-compatible form
  if (first96Zero) return false
  const head = g[0]!
  if ((head & 0xfe00) === 0xfc00) return false // fc00::/7 unique local
  if ((head & 0xffc0) === 0xfe80) return false // fe80::/10 link-local
  if ((head & 0xffc0) === 0xfec0) return false // fec0::/10 site-local (deprecated, still not public)
  if ((head & 0xff00) === 0xff00) return false // ff00::/8 multicast
  return true
}

/**
 * Whether `ip` (an IPv4 or IPv6 literal, without brackets; an IPv6 zone id is
 * ignored) is a public unicast address a server may call. Anything that is not
 * a valid literal is not public: callers fail closed.
 */
export const isPublicAddress = (ip: string): boolean => {
  const address = ip.includes("%") ? ip.slice(0, ip.indexOf("%")) : ip
  switch (isIP(address)) {
    case 4:
      return isPublicV4Number(ipv4ToNumber(address))
    case 6:
      return isPublicV6(address.toLowerCase())
    default:
      return false
  }
}

// Host names

/** A URL's `hostname` as the resolver sees it: no IPv6 brackets, no trailing dot, lower case. */
export const bareHostname = (hostname: string): string => {
  const unbracketed = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  return unbracketed.replace(/\.+$/, "").toLowerCase()
}

/** `localhost` and every `*.localhost` name (RFC 6761: they are always loopback). */
export const isLocalhostName = (host: string): boolean => {
  const h = bareHostname(host)
  return h === "localhost" || h.endsWith(".localhost")
}

// The check


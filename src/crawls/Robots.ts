/**
 * robots.txt as RFC 9309 reads it, for one crawler: the groups whose
 * `User-agent` lines name our product token (else the `*` groups), their
 * `Allow` / `Disallow` rules (`*` any characters, `$` the end; the longest
 * matching rule wins, `Allow` on a tie), their `Crawl-delay` (not in the RFC,
 * honoured as sites mean it), and every `Sitemap:` line of the file.
 */
import { maxRobotsRules } from "../../schema/Crawls.js"
import { normalise } from "./PageUrl.js"

export interface Rule {
  readonly allow: boolean
  readonly pattern: string
  /** The pattern percent-encoded one way, cut at its `*`s (its final `$` taken off): what `isAllowed` scans for. */
  readonly pieces: ReadonlyArray<string>
  /** The pattern ends in `$`: its last piece must end the address. */
  readonly anchored: boolean
}


export interface Robots {
  readonly rules: ReadonlyArray<Rule>
  /** Seconds between two requests to the site, as the group asks; undefined when it does not. */
  readonly crawlDelaySeconds: number | undefined
  /** Absolute sitemap URLs the file names. */
  readonly sitemaps: ReadonlyArray<string>
  /**
   * The groups for us hold more than `maxRobotsRules` rules: `rules` holds the first of them only, and the crawl
   * is refused (a file is not obeyed in part), as for an unreadable one.
   */
  readonly tooManyRules: boolean
}

/** What a site without a robots.txt (or with an unreadable one, a 4xx) allows: everything. */
export const allowAll: Robots = { rules: [], crawlDelaySeconds: undefined, sitemaps: [], tooManyRules: false }

interface Group {
  readonly agents: Array<string>
  readonly rules: Array<Rule>
  crawlDelaySeconds: number | undefined
}

/**
 * The robots.txt `text` for the crawler whose product token is `token` (`AssistantPlatformBot`), fetched from
 * `origin` (relative sitemap lines resolve against it).
 */
export const parseRobots = (text: string, token: string, origin: string): Robots => {
  const groups: Array<Group> = []
  const sitemaps: Array<string> = []
  let current: Group | undefined
  let lastWasAgent = false
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*/, "").trim()
    const colon = line.indexOf(":")
    if (colon < 0) continue
    const field = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (field === "sitemap") {
      const url = normalise(value, origin)
      if (url !== undefined) sitemaps.push(url)
      continue
    }
    if (field === "user-agent") {
      // consecutive user-agent lines share one group
      if (current === undefined || !lastWasAgent) {
        current = { agents: [], rules: [], crawlDelaySeconds: undefined }
        groups.push(current)
      }
      current.agents.push(value.toLowerCase())
      lastWasAgent = true
      continue
    }
    lastWasAgent = false
    if (current === undefined) continue
    if (field === "allow" || field === "disallow") {
      // an empty Disallow allows everything: it is no rule
      if (value !== "") current.rules.push(rule(field === "allow", value))
    } else if (field === "crawl-delay") {
      const seconds = Number(value)
      if (Number.isFinite(seconds) && seconds >= 0) current.crawlDelaySeconds = seconds
    }
  }
  const ours = token.toLowerCase()
  // a line names us by our product token, case aside (a version after `/` ignored); the groups naming us, else
  // the `*` groups, taken together (RFC 9309 2.2.1)
  const namesUs = (agent: string) => agent.split("/")[0]!.trim() === ours
  const named = groups.filter((g) => g.agents.some(namesUs))
  const chosen = named.length > 0 ? named : groups.filter((g) => g.agents.includes("*"))
  const rules = chosen.flatMap((g) => g.rules)
  return {
    rules: rules.slice(0, maxRobotsRules),
    crawlDelaySeconds: chosen.map((g) => g.crawlDelaySeconds).find((d) => d !== undefined),
    sitemaps,
    tooManyRules: rules.length > maxRobotsRules
  }
}

const rule = (allow: boolean, pattern: string): Rule => {
  const anchored = pattern.endsWith("$")
  return { allow, pattern, pieces: canonicalPath(anchored ? pattern.slice(0, -1) : pattern).split("*"), anchored }
}

/**
 * Whether a rule matches `target` (a path with its query) from its start: `*` any characters, a final `$` the
 * end. Scanned, not a regular expression: each piece between `*`s is found at the leftmost place after the one
 * before (the leftmost leaves the most room for what follows, so no other choice can match where it fails), and
 * an anchored rule's last piece must end the address. Each piece is looked for once: no backtracking.
 */
const matches = (rule: Rule, target: string): boolean => {
  const { pieces, anchored } = rule
  const first = pieces[0]!
  if (!target.startsWith(first)) return false
  if (pieces.length === 1) return !anchored || target.length === first.length
  let at = first.length
  const lastIndex = pieces.length - 1
  for (let i = 1; i < lastIndex; i++) {
    const found = target.indexOf(pieces[i]!, at)
    if (found < 0) return false
    at = found + pieces[i]!.length
  }
  const last = pieces[lastIndex]!
  return anchored ? target.length - last.length >= at && target.endsWith(last) : target.indexOf(last, at) >= 0
}

/** Percent-encodes what a path may hold unencoded, so `/a b` and `/a%20b` compare as one. */
const canonicalPath = (path: string): string => {
  try {
    return encodeURI(decodeURI(path))
  } catch {
    return path
  }
}

/** Whether `url` (absolute) may be fetched: the longest matching rule decides, an `Allow` winning a tie. */
export const isAllowed = (robots: Robots, url: string): boolean => {
  const { pathname, search } = new URL(url)
  // robots.txt itself is always allowed (RFC 9309 2.2.2)
  if (pathname === "/robots.txt") return true
  const target = canonicalPath(pathname + search)
  let best: Rule | undefined
  for (const rule of robots.rules) {
    if (!matches(rule, target)) continue
    if (
      best === undefined ||
      rule.pattern.length > best.pattern.length ||
      (rule.pattern.length === best.pattern.length && rule.allow && !best.allow)
    ) {
      best = rule
    }
  }
  return best === undefined || best.allow
}

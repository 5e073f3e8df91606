/**
 * No workspace, and no site a workspace points the service at, stalls it for the others: the hostile cases of
 * `scripts/bench/stall-cases.ts` run against the built service (`node server.mjs`, PGlite or PostgreSQL) while a
 * second client probes `/healthz` every 50 ms. In each case the probe's slowest answer stays under 250 ms, every
 * crawl ends, and another workspace's crawl and deliveries take at most 1.5 times what they take alone (and a
 * second of allowance: `expectShare`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as stall from "../../scripts/bench/stall-cases.js"
import { cleanupAll, cliJson, databaseName, type Service, setupTimeout, startService } from "./support.js"

let service: Service
let target: stall.Target

/** The probe's bound: a person watching the service would call a longer wait a stall. */
const slowestProbeMs = 250

beforeAll(async () => {
  service = await startService(stall.stallEnv)
  target = {
    base: service.base,
    tenant: async (name) => {
      const slug = name.toLowerCase().replace(/\W+/g, "-")
      const ws = await cliJson(service, ["workspaces", "create", "--name", name, "--owner-email", `${slug}@stall.test`, "--plan", "pro"])
      const key = async (kind: string) =>
        (await cliJson(service, ["keys", "create", "--workspace", ws.id, "--kind", kind, "--environment", "test"]))[kind] as string
      return { secret: await key("secret"), forms: await key("forms") }
    }
  }
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

/**
 * The other workspace's work beside the hostile one takes at most 1.5 times its time alone, give or take a second
 * the machine's other work may cost it (the faster of two rounds each: runs of about a second, on two shared cores).
 * A pool one workspace fills makes it tens of seconds.
 */
const expectShare = (result: stall.CaseResult) =>
  expect(result.besideMs!, result.notes.join("; ")).toBeLessThanOrEqual(1.5 * result.aloneMs! + 1_000)

const expectNoStall = (result: stall.CaseResult) => {
  const seen = `${result.name}: ${JSON.stringify(result.probe)}; ${result.notes.join("; ")}`
  expect(result.probe.answers, seen).toBeGreaterThan(0)
  expect(result.probe.failures, seen).toBe(0)
  expect(result.probe.slowestMs, seen).toBeLessThan(slowestProbeMs)
  expect(result.ended, seen).toBe(true)
}

describe(`hostile inputs against the bundle (${databaseName})`, () => {
  it("catastrophic form patterns are refused at write time or answered at once", async () => {
    const result = await stall.patterns(target)
    expectNoStall(result)
    for (const s of result.submissions) {
      // a hostile value is a validation failure (the pattern does not match it), answered in under 100 ms
      expect(s.status, s.pattern).toBe(400)
      expect(s.ms, s.pattern).toBeLessThan(100)
    }
    expect(result.refused.length + result.submissions.length / 2).toBe(stall.hostilePatterns.length)
  }, 120_000)

  it("a robots.txt of many wildcards on long addresses: the crawl ends, the service answers", async () => {
    expectNoStall(await stall.robots(target))
  }, 180_000)

  it("a sitemap of unclosed tags at the size limit with impossible character references: the crawl ends, the service answers", async () => {
    expectNoStall(await stall.sitemap(target))
  }, 240_000)

  it("a crawl of a tarpit site costs its own workspace time, not another workspace's crawl", async () => {
    const result = await stall.crawlTarpit(target)
    expectNoStall(result)
    expectShare(result)
  }, 300_000)

  it("a webhook receiver that never answers costs its own workspace time, not another workspace's deliveries", async () => {
    const result = await stall.webhookTarpit(target)
    expectNoStall(result)
    expectShare(result)
  }, 300_000)
})

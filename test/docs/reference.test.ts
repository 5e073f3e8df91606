/**
 * The reference's Markdown (`docs/reference/*.md`, each API group's description in the OpenAPI document): every
 * file is some group's, and the figures a file quotes come from the code or stop the module from loading.
 */
import { readdirSync, readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { reference } from "../../schema/Reference.js"

const folder = new URL("../../docs/reference/", import.meta.url)
const schemaFolder = new URL("../../schema/", import.meta.url)

it("every file of docs/reference is read by a group of the contract", () => {
  const named = new Set(
    readdirSync(schemaFolder)
      .filter((file) => file.endsWith(".ts"))
      .flatMap((file) => [...readFileSync(new URL(file, schemaFolder), "utf8").matchAll(/reference\("([\w-]+)"/g)].map((m) => m[1]!))
  )
  const files = readdirSync(folder).filter((file) => file.endsWith(".md")).map((file) => file.slice(0, -3))
  expect(files.length).toBeGreaterThan(15)
  expect(files.filter((file) => !named.has(file))).toEqual([])
  expect([...named].filter((name) => !files.includes(name))).toEqual([])
})

it("a figure written {{name}} is filled from the code, and one the code does not give is refused", () => {
  const crawls = readFileSync(new URL("crawls.md", folder), "utf8")
  expect(crawls).toContain("{{crawlPageCap.free}}")
  const filled = reference("crawls", {
    DEFAULT_CRAWL_LIMIT: 50,
    "crawlPageCap.free": 1,
    "crawlPageCap.starter": 2,
    "crawlPageCap.pro": 3,
    "crawlPageCap.enterprise": 4,
    maxRobotsKiB: 5,
    maxRobotsRules: 6,
    maxCrawlDelaySeconds: 7,
    maxSitemapMB: 8,
    maxSitemaps: 9,
    maxSitemapMBPerCrawl: 10,
    maxAddressesMet: 11
  })
  expect(filled).not.toContain("{{")
  expect(filled).toContain("free 1, starter 2, pro 3")
  expect(() => reference("crawls")).toThrow("docs/reference/crawls.md: no value for {{maxCrawlDelaySeconds}}")
})

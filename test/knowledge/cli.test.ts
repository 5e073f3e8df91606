/**
 * `npm run cli -- ingest`: the real CLI (a child process, not a terminal, so
 * plain lines) against the real server on the wall clock: it creates one batch
 * from the file, follows every source to its end, prints a summary, and exits 1
 * because one URL fails.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseUrlList } from "../../src/cli/Ingest.js"
import { runCli } from "../support/cli.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, html, page, serveSite } from "./support.js"

layer(testServer(), { excludeTestServices: true })("cli ingest", (it) => {
  it("reads one URL per line, skipping blanks and comments", () => {
    expect(parseUrlList("# pages\nhttp://a.test/1\n\n  http://a.test/2  \r\n#x\n")).toEqual(["http://a.test/1", "http://a.test/2"])
  })

  it.effect(
    "creates the batch, follows each source to its end, prints a summary, exits 1 when one failed",
    () =>
      Effect.gen(function* () {
        const site = yield* serveSite((req, res) =>
          req.url === "/gone" ? html(res, "gone", 404) : html(res, page(`Page ${req.url}`, [["About", `Text of ${req.url}.`]]))
        )
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "cli-ingest-")))
        const file = join(dir, "urls.txt")
        yield* Effect.promise(() => writeFile(file, `# test\n${site.origin}/a\n${site.origin}/b\n\n${site.origin}/gone\n`))
        const result = yield* runCli(["ingest", "--agent", agentId, "--urls", file, "--url", h.url, "--interval-ms", "200"], {
          API_KEY: ws.secretTest
        })
        yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
        expect(result.stdout).toContain(`Created 3 sources for ${agentId}`)
        expect(result.stdout).toContain("Done: 2 indexed, 1 failed, 0 processing, 0 pending (of 3)")
        expect(result.stdout).toMatch(/failed src_\w+ .*\/gone: not_found/)
        expect(result.code).toBe(1)
      }).pipe(Effect.scoped),
    120_000
  )
})

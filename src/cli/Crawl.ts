/**
 * `npm run cli -- crawl --agent agt_... --site https://help.example.com/`: starts a crawl of the site through the
 * public API with a secret key, then follows it until it has ended and every page it kept is indexed or failed.
 * On a terminal: a progress bar with the crawl's counts, redrawn in place; otherwise (pipes, CI logs) a plain
 * line per change. Ends with what was skipped and why, and exit code 1 if the crawl failed.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { crawlSettled, crawlShare } from "../../schema/CrawlProgress.js"
import type { Crawl } from "../../schema/Crawls.js"
import { AgentId } from "../../schema/Ids.js"
import { apiClient, intervalOption, serviceOptions } from "./ApiClient.js"
import { CliFailure } from "./CliFailure.js"

const skippedText = (c: Crawl) =>
  Object.entries(c.pages.skipped)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(", ")

/** One line of a crawl's progress. */
export const crawlLine = (c: Crawl, width = 20) => {
  const filled = Math.round(crawlShare(c) * width)
  const skipped = skippedText(c)
  return (
    `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${c.status}: ${c.pages.kept} kept, ${c.pages.indexed} indexed, ` +
    `${c.pages.indexing} indexing, ${c.pages.failed} failed, ${c.pages.queued} queued` +
    (skipped === "" ? "" : `; skipped ${skipped}`)
  )
}

const options = {
  agent: Options.text("agent").pipe(
    Options.withSchema(AgentId),
    Options.withPseudoName("AGENT_ID"),
    Options.withDescription("The agent that learns the site: its id (agt_…)")
  ),
  site: Options.text("site").pipe(Options.withPseudoName("URL"), Options.withDescription("The page to start from: its site is crawled")),
  limit: Options.integer("limit").pipe(
    Options.withPseudoName("PAGES"),
    Options.withDescription("Pages to read at most (default 500, capped by the plan)"),
    Options.optional
  ),
  keepToPath: Options.boolean("keep-to-path").pipe(Options.withDescription("Keep to the start page's directory")),
  schedule: Options.choice("schedule", ["off", "daily", "weekly"]).pipe(
    Options.withDescription("Crawl the site again daily or weekly (default off)"),
    Options.withDefault("off" as const)
  ),
  ...serviceOptions,
  interval: intervalOption("the crawl")
}

export const crawl = Command.make("crawl", options, (args) =>
  Effect.gen(function* () {
    const client = yield* apiClient(args)
    const created = yield* client.crawls.create({
      path: { agent_id: args.agent },
      payload: {
        url: args.site,
        keep_to_path: args.keepToPath,
        schedule: args.schedule,
        ...(Option.isSome(args.limit) ? { limit: args.limit.value } : {})
      }
    })
    yield* Console.log(
      `Crawl ${created.data.id} of ${created.data.url} for ${args.agent} (at most ${created.data.limit} pages)` +
        (created.data.next_run_at === null ? "" : `; again ${created.data.schedule}, next at ${created.data.next_run_at}`)
    )
    const poll = Effect.map(client.crawls.retrieve({ path: { agent_id: args.agent, crawl_id: created.data.id } }), (r) => r.data)

    const tty = process.stdout.isTTY === true
    let last = ""
    const render = (c: Crawl) =>
      Effect.sync(() => {
        const line = crawlLine(c)
        if (tty) process.stdout.write(`\r\x1b[2K${line}`)
        else if (line !== last) process.stdout.write(`${line}\n`)
        last = line
      })

    let current = yield* poll
    yield* render(current)
    while (!crawlSettled(current)) {
      yield* Effect.sleep(Duration.millis(args.interval))
      current = yield* poll
      yield* render(current)
    }
    if (tty) process.stdout.write("\n")
    yield* Console.log(`Done: ${current.status}, ${current.pages.indexed} of ${current.pages.discovered} pages met indexed`)
    if (current.error !== null) return yield* Effect.fail(new CliFailure({ message: `the crawl failed: ${current.error.code}: ${current.error.message}` }))
  }).pipe(Effect.provide(FetchHttpClient.layer))
).pipe(Command.withDescription("Crawl a website into an agent and follow it until every page it kept is indexed or failed"))

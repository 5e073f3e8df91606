/**
 * `npm run cli -- ingest --agent agt_... --urls urls.txt`: sends the URLs (one
 * per line, `#` comments and blank lines skipped) as one batch through the
 * public API with a secret key, then follows every source until it is indexed
 * or failed. On a terminal: a live progress bar per source, redrawn in place;
 * otherwise (pipes, CI logs) a plain line per change. Ends with a summary, and
 * exit code 1 if any source failed.
 */
import * as Options from "@effect/cli/Options"
import * as Command from "@effect/cli/Command"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { AgentId } from "../../schema/Ids.js"
import { apiClient, intervalOption, serviceOptions } from "./ApiClient.js"
import { MAX_BATCH_URLS, type KnowledgeSource } from "../../schema/Knowledge.js"
import { CliFailure } from "./CliFailure.js"

const settled = (s: KnowledgeSource) => s.status === "indexed" || s.status === "failed"

const bar = (progress: number, width = 20) => {
  const filled = Math.round((Math.max(0, Math.min(100, progress)) / 100) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

const label = (s: KnowledgeSource, width: number) => {
  const text = s.source_ref.length > width ? `…${s.source_ref.slice(-(width - 1))}` : s.source_ref
  return text.padEnd(width)
}

const lineOf = (s: KnowledgeSource, width: number) => {
  const state = s.status === "failed" ? `failed: ${s.error_code ?? ""}` : s.status === "indexed" ? "indexed" : s.phase
  const retry = s.next_attempt_at !== null ? ` (retry at ${s.next_attempt_at}, attempt ${s.attempts})` : ""
  return `${bar(s.status === "indexed" ? 100 : s.progress)} ${String(s.status === "indexed" ? 100 : s.progress).padStart(3)}% ${label(s, width)} ${state}${retry}`
}

const summary = (sources: ReadonlyArray<KnowledgeSource>) => {
  const by = (status: string) => sources.filter((s) => s.status === status).length
  return `${by("indexed")} indexed, ${by("failed")} failed, ${by("processing")} processing, ${by("pending")} pending (of ${sources.length})`
}

export const parseUrlList = (text: string): ReadonlyArray<string> =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))

const options = {
  agent: Options.text("agent").pipe(
    Options.withSchema(AgentId),
    Options.withPseudoName("AGENT_ID"),
    Options.withDescription("The agent that gets the sources: its id (agt_…)")
  ),
  urls: Options.file("urls", { exists: "yes" }).pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(`File with one URL per line (at most ${MAX_BATCH_URLS}); blank lines and lines starting with # are skipped`)
  ),
  ...serviceOptions,
  interval: intervalOption("the sources' progress")
}

export const ingest = Command.make("ingest", options, (args) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const urls = parseUrlList(yield* fs.readFileString(args.urls))
    if (urls.length === 0) return yield* Effect.fail(new CliFailure({ message: `${args.urls} holds no URL` }))
    if (urls.length > MAX_BATCH_URLS) {
      return yield* Effect.fail(new CliFailure({ message: `${args.urls} holds ${urls.length} URLs; a batch takes at most ${MAX_BATCH_URLS}` }))
    }
    const client = yield* apiClient(args)

    const created = yield* client.knowledge.batch({
      path: { agent_id: args.agent },
      headers: { "idempotency-key": crypto.randomUUID() },
      payload: { urls }
    })
    const ids = new Set(created.data.sources.map((s) => s.id))
    yield* Console.log(`Created ${created.data.count} sources for ${args.agent}`)

    // the list is newest first; the batch is the newest `count` sources unless others were added since
    const poll = Effect.gen(function* () {
      const found = new Map<string, KnowledgeSource>()
      let after: string | undefined
      for (let page = 0; page < 50 && found.size < ids.size; page++) {
        const list = yield* client.knowledge.list({
          path: { agent_id: args.agent },
          urlParams: { limit: "100", ...(after === undefined ? {} : { starting_after: after }) }
        })
        for (const s of list.data) if (ids.has(s.id)) found.set(s.id, s)
        if (!list.meta.pagination.has_more || list.meta.pagination.next_cursor === null) break
        after = list.meta.pagination.next_cursor
      }
      return created.data.sources.map((s) => found.get(s.id) ?? s)
    })

    const tty = process.stdout.isTTY === true
    const width = Math.max(20, Math.min(60, (process.stdout.columns ?? 100) - 50))
    let drawn = 0
    const seen = new Map<string, string>()
    const render = (sources: ReadonlyArray<KnowledgeSource>) =>
      Effect.sync(() => {
        if (tty) {
          // unfinished sources first (in order), then the latest finished ones, as many as the screen holds
          const room = Math.max(5, (process.stdout.rows ?? 30) - 3)
          const open = sources.filter((s) => !settled(s))
          const done = sources.filter(settled)
          const shown = [...open, ...done.slice(-Math.max(0, room - open.length))].slice(0, room)
          const lines = [...shown.map((s) => lineOf(s, width)), summary(sources)]
          const up = drawn > 0 ? `\x1b[${drawn}F` : ""
          process.stdout.write(`${up}${lines.map((l) => `\x1b[2K${l}`).join("\n")}\n`)
          drawn = lines.length
        } else {
          for (const s of sources) {
            const state = `${s.status}/${s.phase}/${s.progress}/${s.attempts}`
            if (seen.get(s.id) !== state) {
              seen.set(s.id, state)
              process.stdout.write(`${s.id} ${s.source_ref} ${s.status} ${s.phase} ${s.progress}%${s.error ? ` ${s.error_code}: ${s.error}` : ""}\n`)
            }
          }
        }
      })

    let sources = yield* poll
    yield* render(sources)
    while (!sources.every(settled)) {
      yield* Effect.sleep(Duration.millis(args.interval))
      sources = yield* poll
      yield* render(sources)
    }
    yield* Console.log(`Done: ${summary(sources)}`)
    const failed = sources.filter((s) => s.status === "failed")
    for (const s of failed) yield* Console.log(`  failed ${s.id} ${s.source_ref}: ${s.error_code} ${s.error ?? ""}`)
    if (failed.length > 0) return yield* Effect.fail(new CliFailure({ message: `${failed.length} source(s) failed` }))
  }).pipe(Effect.provide(FetchHttpClient.layer))
).pipe(Command.withDescription("Ingest a list of URLs into an agent and follow each source until it is indexed or failed"))

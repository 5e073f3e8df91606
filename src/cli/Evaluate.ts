/**
 * `npm run cli -- evaluate --agent agt_... --evaluation evl_...` starts a new run of an evaluation;
 * `npm run cli -- evaluate --agent agt_... --cases cases.json` creates one from a file of cases and follows its
 * first run. Either way the run is followed until it ends: on a terminal a progress bar redrawn in place,
 * otherwise a plain line per change. Ends with each failed case and the score; exit code 1 if the run failed,
 * could not start, or outlived `--timeout-s`. `--json` prints the final run on stdout, the rest on stderr.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { basename } from "node:path"
import { EvaluationCase, type EvaluationRun, type Expectation, maxCases } from "../../schema/Evaluations.js"
import { AgentId, EvaluationId } from "../../schema/Ids.js"
import { apiClient, intervalOption, serviceOptions } from "./ApiClient.js"
import { CliFailure } from "./CliFailure.js"

const ended = (run: EvaluationRun) => run.status === "completed" || run.status === "failed"

/** One line of a run's progress: cases done of total, passed so far. */
export const runLine = (run: EvaluationRun, width = 20) => {
  const done = run.results.length
  const filled = run.total === 0 ? width : Math.round((Math.min(done, run.total) / run.total) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${run.status}: ${done} of ${run.total} cases done, ${run.passed} passed`
}

export const expectationText = (e: Expectation) =>
  "contains" in e ? `contains "${e.contains}"` : "declines" in e ? "declines (the fallback)" : `draws on ${e.source_id}`

/** The reply's start, on one line. */
export const replyStart = (reply: string, chars = 120) => {
  const flat = reply.replace(/\s+/g, " ").trim()
  return flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat
}

/** Each failed case (its question, what was expected, the reply's start), then the score. */
export const runReport = (run: EvaluationRun): ReadonlyArray<string> => [
  ...run.results.flatMap((r, i) =>
    r.passed
      ? []
      : [
          `  failed case ${i + 1}: ${r.question}`,
          `    expected: ${expectationText(r.expect)}`,
          `    reply (${r.outcome}): ${replyStart(r.reply)}`
        ]
  ),
  run.score === null
    ? `Score: none (${run.status}, ${run.passed} of ${run.total} passed before it ended)`
    : `Score: ${run.passed}/${run.total} (${run.score})`
]

const CasesFile = Schema.parseJson(
  Schema.Array(EvaluationCase).pipe(Schema.minItems(1), Schema.maxItems(maxCases))
)

/** What is wrong with a cases file, each issue at its place (`[2].expect: is missing`). */
const casesIssues = (e: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(e)
    .map((i) => (i.path.length === 0 ? i.message : `${i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "")}: ${i.message}`))
    .join("; ")

const options = {
  agent: Options.text("agent").pipe(
    Options.withSchema(AgentId),
    Options.withPseudoName("AGENT_ID"),
    Options.withDescription("The agent evaluated: its id (agt_…)")
  ),
  evaluation: Options.text("evaluation").pipe(
    Options.withSchema(EvaluationId),
    Options.withPseudoName("EVALUATION_ID"),
    Options.withDescription("Start a new run of this existing evaluation: its id (evl_…); or give --cases"),
    Options.optional
  ),
  cases: Options.file("cases", { exists: "yes" }).pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(
      `Create an evaluation from this JSON file (an array of 1 to ${maxCases} cases, each {"question", "expect"}) and follow its first run`
    ),
    Options.optional
  ),
  name: Options.text("name").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription("The new evaluation's name, with --cases (default: the file's name)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(
    Options.withDescription("Print the final run as JSON on stdout, for scripts (progress and messages go to stderr)")
  ),
  ...serviceOptions,
  interval: intervalOption("the run"),
  timeout: Options.integer("timeout-s").pipe(
    Options.withPseudoName("SECONDS"),
    Options.withDescription("Give up following the run after this many seconds, with exit code 1 (default 1800); the run goes on"),
    Options.withDefault(1800)
  )
}

export const evaluate = Command.make("evaluate", options, (args) =>
  Effect.gen(function* () {
    if (Option.isSome(args.evaluation) === Option.isSome(args.cases)) {
      return yield* Effect.fail(new CliFailure({ message: "give either --evaluation (run an existing evaluation) or --cases (create one from a file)" }))
    }
    if (Option.isSome(args.name) && Option.isNone(args.cases)) {
      return yield* Effect.fail(new CliFailure({ message: "--name names a new evaluation: it goes with --cases" }))
    }
    const out = args.json ? process.stderr : process.stdout
    const say = (line: string) => Effect.sync(() => void out.write(`${line}\n`))
    const client = yield* apiClient(args)

    const started = yield* Option.match(args.cases, {
      onSome: (file) =>
        Effect.gen(function* () {
          const text = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.readFileString(file)))
          const cases = yield* Schema.decodeUnknown(CasesFile)(text).pipe(
            Effect.mapError((e) => new CliFailure({ message: `${file}: ${casesIssues(e)}` }))
          )
          const name = Option.getOrElse(args.name, () => basename(file).replace(/\.json$/i, ""))
          const created = yield* client.evaluations.create({ path: { id: args.agent }, payload: { name, cases } })
          const run = created.data.latest_run
          if (run === null) return yield* Effect.fail(new CliFailure({ message: `evaluation ${created.data.id} was created without a run` }))
          yield* say(`Created evaluation ${created.data.id} "${created.data.name}" (${cases.length} cases) for ${args.agent}; run ${run.id}`)
          return run
        }),
      onNone: () =>
        Effect.gen(function* () {
          const evaluationId = Option.getOrThrow(args.evaluation)
          const run = (yield* client.evaluations.startRun({ path: { id: args.agent, evaluation_id: evaluationId } })).data
          yield* say(`Run ${run.id} of evaluation ${evaluationId} for ${args.agent} (${run.total} cases)`)
          return run
        })
    })

    const poll = Effect.map(
      client.evaluations.retrieveRun({ path: { id: args.agent, evaluation_id: started.evaluation_id, run_id: started.id } }),
      (r) => r.data
    )
    const tty = out.isTTY === true
    let last = ""
    const render = (run: EvaluationRun) =>
      Effect.sync(() => {
        const line = runLine(run)
        if (tty) out.write(`\r\x1b[2K${line}`)
        else if (line !== last) out.write(`${line}\n`)
        last = line
      })

    let current = started
    const follow = Effect.gen(function* () {
      yield* render(current)
      while (!ended(current)) {
        yield* Effect.sleep(Duration.millis(args.interval))
        current = yield* poll
        yield* render(current)
      }
    })
    yield* follow.pipe(
      Effect.timeoutFail({
        duration: Duration.seconds(args.timeout),
        onTimeout: () =>
          new CliFailure({
            message:
              `gave up after ${args.timeout} s: run ${current.id} is still ${current.status} ` +
                `(${current.results.length} of ${current.total} cases done); it goes on, see GET ` +
                `/v1/agents/${args.agent}/evaluations/${current.evaluation_id}/runs/${current.id}`
          })
      }),
      Effect.onExit(() => Effect.sync(() => void (tty && last !== "" ? out.write("\n") : undefined)))
    )

    for (const line of runReport(current)) yield* say(line)
    if (args.json) yield* Effect.sync(() => void process.stdout.write(`${JSON.stringify(current, null, 2)}\n`))
    if (current.error !== null) return yield* Effect.fail(new CliFailure({ message: `the run failed: ${current.error.code}: ${current.error.message}` }))
    if (current.status !== "completed") return yield* Effect.fail(new CliFailure({ message: `the run ended ${current.status}` }))
  }).pipe(Effect.provide(FetchHttpClient.layer))
).pipe(Command.withDescription("Run an agent's evaluation (an existing one, or one made from a file of cases) and follow it to its score"))

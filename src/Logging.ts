/**
 * Logs as JSON lines: one object per line with `time`, `level`, `msg`, the
 * fiber's log annotations, the fields of a `LogFields` message part (the request
 * line's `request_id`, `route`, ...) and `cause` when there is one. Every line passes through `redact` before it is
 * written, so a key, token or e-mail address that reached a message (an error's
 * text, an e-mail body) is masked anyway: the request line itself only carries
 * fields chosen to hold none.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { CurrentRequestId } from "../schema/Envelope.js"

/** `LOG_LEVEL` values, lowest first. */
export const logLevelNames = ["all", "trace", "debug", "info", "warning", "error", "fatal", "none"] as const
export type LogLevelName = (typeof logLevelNames)[number]

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

const secretPatterns: ReadonlyArray<readonly [RegExp, string]> = [
  // API keys keep their visible prefix (which kind, which environment), never the secret part
  [/\b((?:widget_)?pk|sk)_(test|live)_[A-Za-z0-9]+/g, "$1_$2_[redacted]"],
  [/\b(whsec|idsec)_[A-Za-z0-9]+/g, "$1_[redacted]"],
  // JSON Web Tokens (identity tokens): three base64url parts, the first a JSON header
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "[redacted-jwt]"],
  [/\b(Bearer)\s+[^\s"',;]+/gi, "$1 [redacted]"],
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, "[redacted-email]"]
]

/** What any of the patterns needs to be present: most lines have none of it and skip the five replacements. */
const mayHoldSecret = /_test_|_live_|whsec_|idsec_|eyJ|bearer|@/i

/** `text` with keys, tokens, secrets and e-mail addresses masked. */
export const redact = (text: string): string =>
  mayHoldSecret.test(text)
    ? secretPatterns.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text)
    : text

/**
 * Fields logged at the top level of the line: `Effect.logInfo("request", new LogFields({...}))`. Cheaper than
 * `Effect.annotateLogs` for a line logged on every request (no annotation map is built and set on the fiber).
 */
export class LogFields {
  constructor(readonly fields: Readonly<Record<string, unknown>>) {}
}


/** The message's parts but `LogFields`, joined by spaces (a loop: this runs for every request line). */
const messageText = (parts: ReadonlyArray<unknown>): string => {
  let text: string | undefined
  for (const part of parts) {
    if (part instanceof LogFields) continue
    const piece = typeof part === "string" ? part : safeJson(part)
    text = text === undefined ? piece : `${text} ${piece}`
  }
  return text ?? ""
}

const safeJson = (value: unknown): string => {
  if (value instanceof Error) return `${value.name}: ${value.message}`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** The JSON-lines logger; `write` receives each line (without its newline). */
export const jsonLines = (write: (line: string) => void) =>
  Logger.make(({ annotations, cause, context, date, logLevel, message }) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    const entry: Record<string, unknown> = {
      time: date.toISOString(),
      level: logLevel.label.toLowerCase(),
      msg: messageText(parts)
    }
    const requestId = FiberRefs.getOrDefault(context, CurrentRequestId)
    if (requestId !== undefined) entry["request_id"] = requestId
    if (HashMap.size(annotations) > 0) HashMap.forEach(annotations, (value, key) => (entry[key] = value))
    for (const part of parts) if (part instanceof LogFields) Object.assign(entry, part.fields)
    if (!Cause.isEmpty(cause)) entry["cause"] = Cause.pretty(cause, { renderErrorCause: true })
    write(redact(safeJson(entry)))
  })

/**
 * The last line of a process that cannot go on: an error that escaped every handler (`origin`: Node's
 * `uncaughtException` or `unhandledRejection`), as one JSON line at fatal level, written at once.
 */
export const writeFatal = (origin: string, error: unknown) => {
  const named = error instanceof Error ? `${error.name}: ${error.message}` : safeJson(error)
  const entry = {
    time: new Date().toISOString(),
    level: "fatal",
    msg: `${origin}: ${named}; exiting so a supervisor starts the service afresh`,
    ...(error instanceof Error && error.stack !== undefined ? { cause: error.stack } : {})
  }
  flush()
  process.stdout.write(`${redact(safeJson(entry))}\n`)
}

/**
 * Lines go out together, at most `flushMillis` after the first of them: stdout
 * to a pipe is a blocking write on Linux that also wakes the reader, and a write
 * per request cost more than the request itself (scripts/bench/results/get-agent-edge.md).
 * A burst of `maxBuffered` lines is written at once; lines still buffered are
 * written when the process exits (the hook is added by the first line, not at import).
 */
const maxBuffered = 1000
const flushMillis = 100
let buffered: Array<string> = []
let scheduled = false
let flushesOnExit = false
const flush = () => {
  scheduled = false
  if (buffered.length === 0) return
  const text = `${buffered.join("\n")}\n`
  buffered = []
  process.stdout.write(text)
}
const stdout = (line: string) => {
  if (!flushesOnExit) {
    flushesOnExit = true
    process.once("exit", flush)
  }
  buffered.push(line)
  if (buffered.length >= maxBuffered) return flush()
  if (!scheduled) {
    scheduled = true
    setTimeout(flush, flushMillis).unref()
  }
}

/** Replaces the default logger with JSON lines at `level` and above (`write`: stdout unless a test captures). */
export const layerJson = (options: { readonly level: LogLevelName; readonly write?: (line: string) => void }) => {
  const write = options.write ?? stdout
  const requestLinesOn = LogLevel.greaterThanEqual(LogLevel.Info, levels[options.level])
  return Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, jsonLines(write)),
    // the runtime's pretty logger, when a runner added it
    Logger.remove(Logger.prettyLoggerDefault),
    Logger.minimumLogLevel(levels[options.level]),
    Layer.succeed(RequestLog, {
      line: (fields, atMillis) =>
        requestLinesOn
          ? Effect.sync(() => {
              const entry = { time: new Date(atMillis).toISOString(), level: "info", msg: "request", ...fields }
              write(redact(safeJson(entry)))
            })
          : Effect.void
    })
  )
}

/**
 * The request line of the HTTP edge, one per request (`msg: "request"`, level info), at `atMillis` (the end of
 * the request by the edge's Clock, which it has read already). With `layerJson` it goes straight to the JSON
 * lines, as the logger would write it, past Effect's logging pipeline (a copy of the fiber's FiberRefs, the set
 * of loggers, the annotations), which showed in the edge's profile; without it, it is an ordinary
 * `Effect.logInfo`.
 */
export class RequestLog extends Context.Reference<RequestLog>()("App/RequestLog", {
  defaultValue: (): {
    readonly line: (fields: Readonly<Record<string, unknown>>, atMillis: number) => Effect.Effect<void>
  } => ({
    line: (fields) => Effect.logInfo("request", new LogFields(fields))
  })
}) {}

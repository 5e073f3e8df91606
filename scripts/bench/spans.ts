/**
 * A stand-in OTLP/HTTP (JSON) trace collector in the benchmark's process, and
 * the sum of a knowledge ingestion's spans by phase: the service runs with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` pointing here, and each received span is kept
 * as id, parent, name and duration (plus what classifies it: the SQL text's
 * start, the HTTP path).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { host } from "./lib.js"

export interface SpanRecord {
  readonly id: string
  readonly parent: string | undefined
  readonly name: string
  /** Start and end, ms since the epoch. */
  readonly start: number
  readonly end: number
  readonly ms: number
  /** `db.query.text` of a `sql.execute` span, `url.path` of an `http.server` span, `queue` of a `JobQueue.*` one. */
  readonly detail: string | undefined
}

interface OtlpValue {
  readonly stringValue?: string
}
interface OtlpSpan {
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly startTimeUnixNano: string | number
  readonly endTimeUnixNano: string | number
  readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>
}
interface OtlpBody {
  readonly resourceSpans?: ReadonlyArray<{ readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<OtlpSpan> }> }>
}

const nanos = (v: string | number) => BigInt(typeof v === "number" ? Math.round(v) : v)

export interface Collector {
  readonly origin: string
  readonly spans: Array<SpanRecord>
  readonly close: () => void
}

/** Listens on 127.0.0.1; every POST to `/v1/traces` is parsed as OTLP JSON and answered `{}`. */
export const startCollector = () =>
  new Promise<Collector>((resolve) => {
    const spans: Array<SpanRecord> = []
    const server = createServer((req, res) => {
      const parts: Array<Buffer> = []
      req.on("data", (part: Buffer) => parts.push(part))
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/v1/traces") {
          const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as OtlpBody
          for (const rs of body.resourceSpans ?? []) {
            for (const ss of rs.scopeSpans ?? []) {
              for (const span of ss.spans ?? []) {
                const attribute = (key: string) => span.attributes?.find((a) => a.key === key)?.value.stringValue
                const detail =
                  span.name === "sql.execute"
                    ? attribute("db.query.text")?.replace(/\s+/g, " ").trim().slice(0, 120)
                    : span.name.startsWith("http.server")
                      ? attribute("url.path")
                      : span.name.startsWith("JobQueue.")
                        ? attribute("queue")
                        : undefined
                const start = nanos(span.startTimeUnixNano)
                const end = nanos(span.endTimeUnixNano)
                spans.push({
                  id: span.spanId,
                  parent: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
                  name: span.name,
                  start: Number(start / 1000n) / 1000,
                  end: Number(end / 1000n) / 1000,
                  ms: Number(end - start) / 1e6,
                  detail
                })
              }
            }
          }
        }
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    server.listen(0, host, () =>
      resolve({
        origin: `http://${host}:${(server.address() as AddressInfo).port}`,
        spans,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      })
    )
  })

/** The rows of the profile, in the order a source meets them: one agent's run, where they follow one another. */
export const phaseRows = [
  "batch request",
  "claim",
  "handler (load source, rest)",
  "fetch",
  "extract",
  "categorize",
  "qa",
  "chunk",
  "embed",
  "write",
  "progress",
  "event",
  "settle"
] as const
export type PhaseRow = (typeof phaseRows)[number]

export interface Profile {
  /** Time of each row, exclusive of the rows nested in it (ms). */
  readonly ms: Record<PhaseRow, number>
  /** Of which `sql.execute` spans (ms). */
  readonly sqlMs: Record<PhaseRow, number>
  /** Spans of each row (e.g. the progress writes per source). */
  readonly count: Record<PhaseRow, number>
  readonly handlers: number
  readonly spans: number
  /** Concurrent with the rows, so outside their sum: the poller's requests; other queues' claims and settles. */
  readonly polls: { readonly n: number; readonly ms: number }
  readonly otherQueues: { readonly n: number; readonly ms: number }
  /** The ingestion queue's claims while a handler ran (a free slot claims, the key's next job waits): their time out of the handler's. */
  readonly claimsBeside: { readonly n: number; readonly ms: number }
  /** The SQL of the rows by statement (its text's start), the costliest first. */
  readonly statements: ReadonlyArray<{ readonly row: PhaseRow; readonly text: string; readonly n: number; readonly ms: number }>
  /** SQL in no row, request or queue span (lease extensions, other workers' reads), and its time. */
  readonly looseSql: { readonly n: number; readonly ms: number }
}

/** The ingestion queue's name (`INGEST_QUEUE`). */
const ingestQueue = "ingest"

/** A span that is a row of its own, nesting the rows under it. */
const rowOf = (span: SpanRecord): PhaseRow | undefined => {
  if (span.name === "Pipeline.handle") return "handler (load source, rest)"
  if (span.name === "Outbox.emit") return "event"
  if (span.name === "JobQueue.claim" && span.detail === ingestQueue) return "claim"
  if (span.name === "JobQueue.settle" && span.detail === ingestQueue) return "settle"
  if (span.name.startsWith("knowledge.")) {
    const phase = span.name.slice("knowledge.".length)
    return (phaseRows as ReadonlyArray<string>).includes(phase) ? (phase as PhaseRow) : undefined
  }
  return undefined
}

const isContainer = (span: SpanRecord) =>
  rowOf(span) !== undefined || span.name.startsWith("http.server") || span.name.startsWith("JobQueue.")

/**
 * Each row's time exclusive of the rows nested in it (the final state update is a progress write inside `write`,
 * the event too), and the SQL under it; SQL under no row belongs to a request, another queue or nothing.
 */
export const profile = (spans: ReadonlyArray<SpanRecord>): Profile => {
  const zero = () => Object.fromEntries(phaseRows.map((r) => [r, 0])) as Record<PhaseRow, number>
  const ms = zero()
  const sqlMs = zero()
  const count = zero()
  const byId = new Map(spans.map((s) => [s.id, s]))
  /** The nearest proper ancestor that is a row, a request or a queue span. */
  const containerOf = (span: SpanRecord): SpanRecord | undefined => {
    let p = span.parent === undefined ? undefined : byId.get(span.parent)
    while (p !== undefined && !isContainer(p)) p = p.parent === undefined ? undefined : byId.get(p.parent)
    return p
  }
  const polls = { n: 0, ms: 0 }
  const otherQueues = { n: 0, ms: 0 }
  const looseSql = { n: 0, ms: 0 }
  let handlers = 0
  const handled = spans
    .filter((s) => s.name === "Pipeline.handle" || (s.name.startsWith("http.server") && s.detail?.endsWith("/knowledge/batch")))
    .map((s) => [s.start, s.end] as const)
  /** The part of a span while no handler (nor the batch request) ran: one agent's handlers follow one another. */
  const outsideHandlers = (span: SpanRecord) => {
    let overlap = 0
    for (const [start, end] of handled) overlap += Math.max(0, Math.min(end, span.end) - Math.max(start, span.start))
    return Math.max(0, span.ms - overlap)
  }
  const claimsBeside = { n: 0, ms: 0 }
  const statements = new Map<string, { row: PhaseRow; text: string; n: number; ms: number }>()
  const statement = (row: PhaseRow, span: SpanRecord, ms: number) => {
    const text = (span.detail ?? "").slice(0, 60)
    const entry = statements.get(`${row}\u0000${text}`) ?? { row, text, n: 0, ms: 0 }
    entry.n++
    entry.ms += ms
    statements.set(`${row}\u0000${text}`, entry)
  }
  for (const span of spans) {
    const row = rowOf(span)
    const up = containerOf(span)
    const upRow = up === undefined ? undefined : rowOf(up)
    if (span.name === "Pipeline.handle") handlers++
    if (row === "claim") {
      const outside = outsideHandlers(span)
      ms.claim += outside
      count.claim++
      if (outside < span.ms) {
        claimsBeside.n++
        claimsBeside.ms += span.ms - outside
      }
    } else if (row !== undefined) {
      ms[row] += span.ms
      count[row]++
      if (upRow !== undefined) ms[upRow] -= span.ms
    } else if (span.name.startsWith("http.server") && up === undefined) {
      if (span.detail?.endsWith("/knowledge/batch")) {
        ms["batch request"] += span.ms
        count["batch request"]++
      } else {
        polls.n++
        polls.ms += span.ms
      }
    } else if (span.name.startsWith("JobQueue.") && up === undefined) {
      otherQueues.n++
      otherQueues.ms += span.ms
    } else if (span.name === "sql.execute") {
      if (upRow !== undefined) {
        const ms = upRow === "claim" ? outsideHandlers(span) : span.ms
        sqlMs[upRow] += ms
        statement(upRow, span, ms)
      }
      else if (up?.detail?.endsWith("/knowledge/batch")) sqlMs["batch request"] += span.ms
      else if (up === undefined) {
        looseSql.n++
        looseSql.ms += span.ms
      }
    }
  }
  return {
    ms,
    sqlMs,
    count,
    handlers,
    spans: spans.length,
    polls,
    otherQueues,
    claimsBeside,
    statements: [...statements.values()].sort((a, b) => b.ms - a.ms),
    looseSql
  }
}

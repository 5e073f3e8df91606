/**
 * The service's own metrics (Effect `Metric`s, one registry per process) and
 * their rendering in the Prometheus text exposition format. Areas record into
 * them; `GET /metrics` renders `Metric.snapshot` plus gauges read at scrape time.
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"

export const httpRequests = Metric.counter("http_requests_total", {
  description: "HTTP requests answered, by route template, method and status",
  incremental: true
})

export const httpDuration = Metric.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time from the request's arrival to its response, by route template, method and status"
)

export const webhookDeliveries = Metric.counter("webhook_deliveries_total", {
  description: "Webhook delivery attempts, by outcome (succeeded, retrying, failed)",
  incremental: true
})

export const jobAttemptsFailed = Metric.counter("jobs_attempts_failed_total", {
  description: "Job attempts whose handler failed or died (each retried, or the last given up), by queue",
  incremental: true
})

export const jobsFailed = Metric.counter("jobs_failed_total", {
  description: "Jobs settled as failed for good (attempts used up, or failed by their handler), by queue",
  incremental: true
})

export const openStreams = Metric.gauge("sse_open_streams", {
  description: "Server-sent event replies open now"
})

const labelsOf = (tags: Readonly<Record<string, string>>) =>
  Object.entries(tags).map(([key, value]) => MetricLabel.make(key, value))

const series = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()

/**
 * The labels of a request series, one array per series for the process's life: Effect finds a metric's
 * series by the identity of the label array it is updated with (a WeakMap), while `Metric.tagged` unions
 * its labels into a new array on every update, which hashed the series key and searched the registry each
 * time. Bounded: route templates and statuses are few.
 */
const seriesOf = (route: string, method: string, status: number) => {
  const key = `${method} ${status} ${route}`
  let labels = series.get(key)
  if (labels === undefined) {
    labels = labelsOf({ route, method, status: String(status) })
    series.set(key, labels)
  }
  return labels
}

/** Records one answered request; `route` is the template (`/v1/agents/{id}`), never the raw path. */
export const recordRequest = (route: string, method: string, status: number, seconds: number): void => {
  const labels = seriesOf(route, method, status)
  httpRequests.unsafeUpdate(1, labels)
  httpDuration.unsafeUpdate(seconds, labels)
}

// one label array per outcome, kept (see `seriesOf`)
const deliveryOutcomes = {
  succeeded: labelsOf({ outcome: "succeeded" }),
  retrying: labelsOf({ outcome: "retrying" }),
  failed: labelsOf({ outcome: "failed" })
}

/** Counts one webhook attempt's outcome. */
export const recordDelivery = (outcome: "succeeded" | "retrying" | "failed") =>
  Effect.sync(() => webhookDeliveries.unsafeUpdate(1, deliveryOutcomes[outcome]))

// one label array per queue, kept (see `seriesOf`); queues are few and named in code
const queueSeries = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
const queueLabels = (queue: string) => {
  let labels = queueSeries.get(queue)
  if (labels === undefined) {
    labels = labelsOf({ queue })
    queueSeries.set(queue, labels)
  }
  return labels
}

/** Counts a job attempt whose handler failed or died. */
export const recordJobAttemptFailed = (queue: string) =>
  Effect.sync(() => jobAttemptsFailed.unsafeUpdate(1, queueLabels(queue)))

/** Counts a job settled as failed for good. */
export const recordJobFailed = (queue: string) => Effect.sync(() => jobsFailed.unsafeUpdate(1, queueLabels(queue)))

/** One sample of a gauge read at scrape time (database counts). */
export interface GaugeSample {
  readonly name: string
  readonly help: string
  readonly labels?: Readonly<Record<string, string>>
  readonly value: number
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const labelText = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`

const numberText = (n: number | bigint) =>
  typeof n === "bigint" ? n.toString() : n === Infinity ? "+Inf" : n === -Infinity ? "-Inf" : Number.isNaN(n) ? "NaN" : String(n)

interface Family {
  type: "counter" | "gauge" | "histogram"
  help: string
  lines: Array<string>
}

/** The Prometheus text format (version 0.0.4) of the registry's metrics and `gauges`. */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>, gauges: ReadonlyArray<GaugeSample>) => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string) => {
    let found = families.get(name)
    if (found === undefined) families.set(name, (found = { type, help, lines: [] }))
    return found
  }
  for (const pair of pairs) {
    const { name, tags, description } = pair.metricKey
    const labels = tags.map((t) => [t.key, t.value] as const)
    const help = description._tag === "Some" ? description.value : name
    const state = pair.metricState
    if (MetricState.isCounterState(state)) {
      family(name, "counter", help).lines.push(`${name}${labelText(labels)} ${numberText(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      family(name, "gauge", help).lines.push(`${name}${labelText(labels)} ${numberText(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const lines = family(name, "histogram", help).lines
      for (const [bound, count] of state.buckets) {
        lines.push(`${name}_bucket${labelText([...labels, ["le", numberText(bound)]])} ${count}`)
      }
      lines.push(`${name}_sum${labelText(labels)} ${numberText(state.sum)}`)
      lines.push(`${name}_count${labelText(labels)} ${state.count}`)
    }
  }
  for (const gauge of gauges) {
    family(gauge.name, "gauge", gauge.help).lines.push(
      `${gauge.name}${labelText(Object.entries(gauge.labels ?? {}))} ${numberText(gauge.value)}`
    )
  }
  const out: Array<string> = []
  for (const [name, f] of families) {
    out.push(`# HELP ${name} ${escapeHelp(f.help)}`, `# TYPE ${name} ${f.type}`, ...f.lines)
  }
  return `${out.join("\n")}\n`
}

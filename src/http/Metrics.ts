/**
 * The HTTP metrics: requests and their durations by route template, and the open
 * server-sent event streams. `GET /metrics` (src/system/Metrics.ts) renders them.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

export const httpRequests = Metric.counter("http_requests_total", {
  description: "HTTP requests answered, by route template, method and status",
  incremental: true
})

export const httpDuration = Metric.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time from the request's arrival to its response, by route template, method and status"
)

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


/** The job queue's metrics: failed attempts and jobs given up, by queue; `GET /metrics` renders them. */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"

export const jobAttemptsFailed = Metric.counter("jobs_attempts_failed_total", {
  description: "Job attempts whose handler failed or died (each retried, or the last given up), by queue",
  incremental: true
})

export const jobsFailed = Metric.counter("jobs_failed_total", {
  description: "Jobs settled as failed for good (attempts used up, or failed by their handler), by queue",
  incremental: true
})

// one label array per queue, kept (Effect finds a series by its label array's identity); queues are few and named in code
const queueSeries = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
const queueLabels = (queue: string) => {
  let labels = queueSeries.get(queue)
  if (labels === undefined) {
    labels = [MetricLabel.make("queue", queue)]
    queueSeries.set(queue, labels)
  }
  return labels
}

/** Counts a job attempt whose handler failed or died. */
export const recordJobAttemptFailed = (queue: string) =>
  Effect.sync(() => jobAttemptsFailed.unsafeUpdate(1, queueLabels(queue)))

/** Counts a job settled as failed for good. */
export const recordJobFailed = (queue: string) => Effect.sync(() => jobsFailed.unsafeUpdate(1, queueLabels(queue)))


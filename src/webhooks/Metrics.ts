/** The webhook delivery metric, by outcome; `GET /metrics` renders it. */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"

export const webhookDeliveries = Metric.counter("webhook_deliveries_total", {
  description: "Webhook delivery attempts, by outcome (succeeded, retrying, failed)",
  incremental: true
})

// one label array per outcome, kept (Effect finds a series by its label array's identity)
const deliveryOutcomes = {
  succeeded: [MetricLabel.make("outcome", "succeeded")],
  retrying: [MetricLabel.make("outcome", "retrying")],
  failed: [MetricLabel.make("outcome", "failed")]
}

/** Counts one webhook attempt's outcome. */
export const recordDelivery = (outcome: "succeeded" | "retrying" | "failed") =>
  Effect.sync(() => webhookDeliveries.unsafeUpdate(1, deliveryOutcomes[outcome]))


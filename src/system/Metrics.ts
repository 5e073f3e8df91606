/**
 * `GET /metrics`: the Prometheus text exposition of the process's metrics plus
 * gauges counted in the database at scrape time. With `METRICS_TOKEN` set it
 * asks for `Authorization: Bearer <METRICS_TOKEN>`; without, it answers loopback
 * callers only (a scraper beside the process) and is a 404 to anyone else.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { timingSafeEqual, createHash } from "node:crypto"
import { InvalidApiKey, MissingAuthorization, RouteNotFound } from "../../schema/Errors.js"
import { openStreams } from "../http/Metrics.js"
import { type GaugeSample, renderPrometheus } from "./Prometheus.js"
import { AppConfig } from "../Config.js"
import { MetricsRepo } from "./MetricsRepo.js"

const ingestionStates = ["pending", "processing", "indexed", "failed"] as const

const isLoopback = (address: string) =>
  address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1" || address.startsWith("127.")

const digest = (s: string) => createHash("sha256").update(s).digest()

/** Whether the caller may read the metrics, or the failure it gets. */
const admit = (token: Option.Option<Redacted.Redacted<string>>, request: HttpServerRequest.HttpServerRequest) => {
  if (Option.isNone(token)) {
    return Option.exists(request.remoteAddress, isLoopback)
      ? Effect.void
      : Effect.fail(new RouteNotFound({ message: "No route GET /metrics" }))
  }
  const match = /^Bearer[ \t]+(\S+)$/i.exec((request.headers["authorization"] ?? "").trim())
  if (match === null) {
    return Effect.fail(new MissingAuthorization({ message: "Send `Authorization: Bearer <METRICS_TOKEN>`" }))
  }
  // compared as digests: equal lengths, and no timing hint of the token's prefix
  return timingSafeEqual(digest(match[1]!), digest(Redacted.value(token.value)))
    ? Effect.void
    : Effect.fail(new InvalidApiKey({ message: "Invalid metrics token.", param: "Authorization" }))
}

export const MetricsRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const repo = yield* MetricsRepo
    const config = yield* AppConfig
    // a gauge appears in the snapshot once touched: zero streams is a reading too
    yield* Metric.modify(openStreams, 0)
    const token = Option.filter(Option.fromNullable(config.metricsToken), (t) => Redacted.value(t) !== "")
    yield* router.get(
      "/metrics",
      Effect.gen(function* () {
        yield* admit(token, yield* HttpServerRequest.HttpServerRequest)
        const now = new Date(yield* Clock.currentTimeMillis)
        const [due, byState, emails, pairs] = yield* Effect.all([
          repo.dueDeliveries(now),
          repo.ingestionByState(),
          repo.pendingEmails(),
          Metric.snapshot
        ])
        const gauges: Array<GaugeSample> = [
          { name: "webhook_deliveries_due", help: "Webhook deliveries whose next attempt is due now", value: due },
          ...ingestionStates.map((state) => ({
            name: "ingestion_jobs",
            help: "Knowledge sources by ingestion state",
            labels: { state },
            value: byState.find((row) => row.state === state)?.n ?? 0
          })),
          { name: "emails_pending", help: "E-mails waiting to be sent", value: emails }
        ]
        return HttpServerResponse.text(renderPrometheus(pairs, gauges), {
          contentType: "text/plain; version=0.0.4; charset=utf-8"
        })
      })
    )
  })
).pipe(Layer.provide(MetricsRepo.Default))

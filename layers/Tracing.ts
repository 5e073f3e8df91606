/**
 * OpenTelemetry tracing over OTLP/HTTP (JSON): the spans Effect already makes
 * (`http.server <METHOD>` per request with its route, the programs named with
 * `Effect.fn`, SQL statements) go to `endpoint`'s `/v1/traces` in batches.
 * `main.ts` imports this module only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
 * so without it none of the OpenTelemetry code is loaded.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Headers from "@effect/platform/Headers"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The service's own key header, besides the library's defaults (`authorization`, `x-api-key`, cookies). */
const redactedHeaders = ["service-api-key", "idempotency-key"]

export const layerOtlp = (options: {
  /** The collector's base URL (`http://collector:4318`); spans go to `<endpoint>/v1/traces`. */
  readonly endpoint: string
  readonly serviceName: string
  /** Longest wait before a batch is sent (default 1 s). */
  readonly exportDelayMillis?: number
}) =>
  Layer.merge(
    NodeSdk.layer(() => ({
      resource: { serviceName: options.serviceName },
      spanProcessor: new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces` }),
        { scheduledDelayMillis: options.exportDelayMillis ?? 1000 }
      )
    })),
    // span attributes carry request headers: the key headers go as "<redacted>"
    Layer.scopedDiscard(
      Effect.locallyScopedWith(Headers.currentRedactedNames, (names) => [...names, ...redactedHeaders])
    )
  )

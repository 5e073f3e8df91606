/**
 * Usage of the current calendar month (UTC) for the key's workspace and
 * environment: tickets created, replies generated, credits consumed (live only).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, Plan, RequiredScope } from "./Auth.js"
import { Envelope, Timestamp } from "./Envelope.js"

const Counted = (what: string) =>
  Schema.Struct({
    used: Schema.Int.annotations({ description: `${what} this period` }),
    cap: Schema.NullOr(Schema.Int).annotations({ description: "The plan's monthly cap; null: unlimited" })
  })

export const Usage = Schema.Struct({
  object: Schema.Literal("usage"),
  plan: Plan,
  livemode: Schema.Boolean,
  period: Schema.Struct({
    start: Timestamp.annotations({ description: "First instant of the month, UTC" }),
    end: Timestamp.annotations({ description: "First instant of the next month, UTC (exclusive)" })
  }),
  tickets: Counted("Tickets created"),
  replies: Counted("Replies generated"),
  credits: Schema.Struct({
    consumed: Schema.Int.annotations({ description: "One per reply with a live key; sandbox replies consume none" })
  })
}).annotations({ identifier: "Usage" })
export type Usage = typeof Usage.Type

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const usageReference = [
  "```json",
  "{",
  "  \"object\": \"usage\",",
  "  \"plan\": \"free\",",
  "  \"livemode\": true,",
  "  \"period\": { \"start\": \"2026-11-01T00:00:00.000Z\", \"end\": \"2026-12-01T00:00:00.000Z\" },",
  "  \"tickets\": { \"used\": 2, \"cap\": 20 },",
  "  \"replies\": { \"used\": 3, \"cap\": 100 },",
  "  \"credits\": { \"consumed\": 3 }",
  "}",
  "```",
  "",
  "The period is the calendar month in UTC by the service clock (`end` is exclusive: the next month's first",
  "instant). Counts are per workspace **and environment**, like ticket caps: a sandbox key reports the sandbox.",
  "",
  "| Plan | Tickets per month | Replies per month |",
  "|---|---:|---:|",
  "| Free | 20 | 100 |",
  "| Starter | 200 | 2,000 |",
  "| Pro | unlimited | unlimited |",
  "| Enterprise | unlimited | unlimited |",
  "",
  "`cap: null` means unlimited. Replies meter themselves through the `Usage` service (`src/usage/Usage.ts`):",
  "`withReply(tenant, reply)`, or `reserveReply` / `releaseReply` around a streamed reply. A reply is counted before it is generated: over the cap it is refused with",
  "`402 limit_reached`, and a reply that does not complete (it fails, or the client goes away) is given back.",
  "Every counted reply made with a live key consumes one credit; sandbox replies never consume credits. The",
  "counter is one row per workspace, environment and month, incremented by one conditional statement",
  "(`insert … on conflict do update … where replies < cap`), so the cap is exact under any concurrency and across",
  "instances. The caps live in `src/usage/Plans.ts` (the ticket caps are the tickets area's, re-exported there).",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- Usage: replies caps Free 100 and Starter 2,000 a month, Pro and Enterprise none, counted per workspace and",
  "  environment like tickets; one credit per live reply, none in the sandbox; the usage object adds `livemode`.",
  "  A reply is reserved before it is generated and released if it does not complete."
].join("\n")

export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("retrieve", "/v1/usage")
      .addSuccess(Envelope(Usage))
      .annotate(RequiredScope, "read:usage")
      .annotate(OpenApi.Description, "This month's usage of the key's workspace and environment")
      .annotate(OpenApi.Summary, "This month's usage: tickets and replies against the plan's caps, credits consumed")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, usageReference)
  .annotate(OpenApi.Title, "Usage") {}

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
import { reference } from "./Reference.js"

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


export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("retrieve", "/v1/usage")
      .addSuccess(Envelope(Usage))
      .annotate(RequiredScope, "read:usage")
      .annotate(OpenApi.Description, "This month's usage of the key's workspace and environment")
      .annotate(OpenApi.Summary, "This month's usage: tickets and replies against the plan's caps, credits consumed")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("usage"))
  .annotate(OpenApi.Title, "Usage") {}

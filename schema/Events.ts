/**
 * The event envelope written to the outbox and sent to webhook receivers.
 * `created` is Unix seconds; the body of an event is fixed when it is written.
 */
import * as Schema from "effect/Schema"
import { EventTypes } from "./EventTypes.js"
import { EventId, WorkspaceId } from "./Ids.js"

export { EventTypes }
export const EventType = Schema.Literal(...EventTypes)
export type EventType = typeof EventType.Type

export const Event = Schema.Struct({
  id: EventId,
  object: Schema.Literal("event"),
  type: EventType,
  created: Schema.Int.annotations({ description: "Unix seconds" }),
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  workspace_id: WorkspaceId,
  api_version: Schema.Literal("v1"),
  livemode: Schema.Boolean
})
export type Event = typeof Event.Type

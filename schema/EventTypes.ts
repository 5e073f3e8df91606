/**
 * The event types, as plain data: `Events.ts` builds the Schema from it, and the
 * console (browser code, which must not bundle Effect) lists them from it too.
 */
export const EventTypes = [
  "agent.created",
  "agent.updated",
  "agent.deleted",
  "conversation.started",
  "conversation.ended",
  "message.feedback",
  "conversation.handoff_requested",
  "conversation.handoff_active",
  "conversation.handoff_closed",
  "lead.captured",
  "knowledge.source.indexed",
  "knowledge.source.failed",
  "knowledge.source.updated",
  "knowledge.source.gone",
  "knowledge.source.removed",
  "crawl.completed",
  "crawl.failed",
  "qa.regenerated",
  "evaluation.run_completed",
  "evaluation.run_failed",
  "course.lesson.source.indexed",
  "course.lesson.source.failed",
  "ticket.created",
  "ticket.message.created",
  "ticket.status.changed",
  "ticket.resolved",
  "webhook.test"
] as const

/**
 * What becomes of conversations with time: the idle job that ends one nobody used for the idle time, and the pruning
 * of stream and hand-off events past their retention (`Area.ts` runs both).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ConversationId } from "../../schema/Ids.js"
import { type Job, Outcome } from "../../layers/JobQueue.js"
import { AppConfig, type AppConfigShape } from "../Config.js"
import { Outbox } from "../events/Outbox.js"
import { now } from "../Time.js"
import { ConversationsRepo, inHandoff, toConversation } from "./ConversationsRepo.js"
import { HandoffRepo } from "./HandoffRepo.js"

export const IDLE_QUEUE = "conversation-idle"
/**
 * Attempts of an idle job (`JobQueue.WorkerOptions.maxAttempts`): each look that finds the conversation still in
 * use retries the job, and counts, so the bound is far above a day of use; one that dies past it is given up (the
 * conversation then stays open until ended by hand), with nothing else held behind it (its key is the conversation).
 */
export const IDLE_MAX_ATTEMPTS = 100
export const defaultIdleMinutes = 30
/**
 * A reply's stream events are kept this long after it ends, for readers that
 * resume with `Last-Event-ID`; the reply itself stays in the conversation.
 */
export const replyEventRetentionDays = 7
/**
 * A conversation's hand-off events (the widget's events stream) are kept this long after they are written, for
 * widgets that resume with `Last-Event-ID`: a widget away longer reads the conversation's messages again.
 */
export const conversationEventRetentionDays = 7
/** How often the events past retention are dropped. */
export const replyEventPruneEveryMillis = 60 * 60_000
/** Rows one statement of a pruning pass drops at most: a big backlog goes in many short statements. */
const pruneBatch = 500

/** What an idle job carries: the conversation it ends. */
export const IdlePayload = Schema.Struct({ conversation_id: ConversationId })
export type IdlePayload = typeof IdlePayload.Type

export const idleMillisOf = (config: AppConfigShape): number => (config.conversationIdleMinutes ?? defaultIdleMinutes) * 60_000


export class ConversationLifecycle extends Effect.Service<ConversationLifecycle>()("Conversations/Lifecycle", {
  effect: Effect.gen(function* () {
    const repo = yield* ConversationsRepo
    const handoffs = yield* HandoffRepo
    const outbox = yield* Outbox
    const idleMillis = idleMillisOf(yield* AppConfig)

    /** The idle job: ends the conversation if nothing happened for the idle time, else looks again then. */
    const handleIdle = (job: Job) =>
      Effect.gen(function* () {
        const payload = Schema.decodeUnknownEither(IdlePayload)(job.payload)
        if (Either.isLeft(payload)) return Outcome.failed("the job names no conversation")
        const { conversation_id } = payload.right
        const row = yield* repo.conversationById(conversation_id)
        if (Option.isNone(row) || row.value.status === "ended") return Outcome.done
        const at = yield* now
        // people may answer later than the idle time: a handed-off conversation stays open while the hand-off is
        if (inHandoff(row.value)) return Outcome.retryAt(new Date(at.getTime() + idleMillis))
        const dueAt = row.value.last_activity_at.getTime() + idleMillis
        if (dueAt > at.getTime()) return Outcome.retryAt(new Date(dueAt))
        yield* repo.transaction(
          Effect.gen(function* () {
            const ended = yield* repo.end(conversation_id, at, new Date(at.getTime() - idleMillis))
            if (Option.isSome(ended) && ended.value.message_count > 0) {
              yield* outbox.emit({
                workspaceId: ended.value.workspace_id,
                environment: ended.value.environment,
                type: "conversation.ended",
                data: { conversation: toConversation(ended.value) }
              })
            }
          })
        )
        return Outcome.done
      })

    /** Drops the stream events of replies that ended over the retention ago, in batches; returns how many replies. */
    const pruneReplyEvents = Effect.gen(function* () {
      const at = yield* now
      const cutoff = new Date(at.getTime() - replyEventRetentionDays * 24 * 60 * 60_000)
      let pruned = 0
      for (;;) {
        const batch = yield* repo.pruneEvents(cutoff, at, pruneBatch)
        pruned += batch
        if (batch < pruneBatch) return pruned
      }
    })

    /** Drops the conversations' hand-off events written over the retention ago, in batches; returns how many. */
    const pruneConversationEvents = Effect.gen(function* () {
      const at = yield* now
      const cutoff = new Date(at.getTime() - conversationEventRetentionDays * 24 * 60 * 60_000)
      let pruned = 0
      for (;;) {
        const batch = yield* handoffs.pruneConversationEvents(cutoff, pruneBatch)
        pruned += batch
        if (batch < pruneBatch) return pruned
      }
    })

    return { handleIdle, pruneReplyEvents, pruneConversationEvents } as const
  }),
  dependencies: [ConversationsRepo.Default, HandoffRepo.Default]
}) {}

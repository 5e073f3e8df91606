/**
 * Replies being generated, and their readers. A reply runs in its own fiber
 * (supervised by this service, so it lives as long as the server), apart from
 * any HTTP request: its events go through its `ReplyLog` (numbered, kept in
 * memory for readers in this process, written to `message_events` in small
 * batches), so a reader on any instance can resume after its `Last-Event-ID`.
 *
 * The reply becomes final only at its end: the message's content and sources,
 * the conversation's count and the `done` event commit in one statement,
 * and only then does `done` reach readers, so a reader that saw it finds the
 * message listed. While no reader follows a reply in this process for
 * `REPLY_RESUME_GRACE_SECONDS` (on the Clock), its fiber is interrupted: the
 * message is marked `interrupted` (never listed) and its stream ends with an
 * `error` event.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Cause from "effect/Cause"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type AiError, wordTokens } from "../../layers/Ai.js"
import type { StreamEvent } from "../../schema/Conversations.js"
import { aiRetryAfterSeconds, AiUnavailable } from "../../schema/Errors.js"
import type { AgentId, ConversationId, MessageId } from "../../schema/Ids.js"
import type { AgentLanguage } from "../../schema/Languages.js"
import type { Tenant } from "../../schema/Tenant.js"
import { text, type TextLanguage } from "../../schema/texts/Catalogue.js"
import { takeLaterTurn } from "../../layers/SessionTurn.js"
import { AppConfig } from "../Config.js"
import { type Reservation, Usage } from "../usage/Usage.js"
import { Answering } from "./Answering.js"
import { ConversationsRepo } from "./ConversationsRepo.js"
import { type Live, makeLive, makeReplyLog, type Numbered, type ReplyLog } from "./ReplyLog.js"

export { fallbackAnswer } from "./Answering.js"

/** The `escalation` event's message, shown to the visitor beside the fallback: in the fallback's language. */
export const escalationOffer = (language: TextLanguage): string => text(language, "answer.escalation")

export const defaultGraceSeconds = 30
const historyLimit = 10

const terminalData = (data: string) => /^\{"type":"(done|error)"/.test(data)

/**
 * The `error` event a failed reply ends with: retrieval's outage has its own code (a non-streamed reply answers it
 * as that 503), a provider's transient failure is `service_unavailable`, anything else `internal_error`. Both
 * outages carry the wait before sending again.
 */
export const errorEventOf = (failure: Option.Option<AiError | AiUnavailable>): StreamEvent => {
  const code = Option.isNone(failure)
    ? "internal_error"
    : failure.value instanceof AiUnavailable
      ? AiUnavailable.code
      : failure.value.transient
        ? "service_unavailable"
        : "internal_error"
  if (code === "internal_error") {
    return { type: "error", code, message: "The reply failed; the request id of the message names it in our logs" }
  }
  // a provider outage: the wait the non-streamed reply's 503 gives in `Retry-After`
  return {
    type: "error",
    code,
    message: "The AI provider did not answer; send the message again later",
    retry_after: aiRetryAfterSeconds
  }
}

/** A turn of a conversation as the model reads it. */
export interface Turn {
  readonly role: "user" | "assistant"
  readonly content: string
}

export interface ReplyPlan {
  readonly tenant: Tenant
  readonly agentId: AgentId
  readonly conversationId: ConversationId
  readonly messageId: MessageId
  readonly question: string
  /** This message opened the conversation: it has no history. */
  readonly opened: boolean
  readonly instructions: string | null
  readonly agentLanguage: AgentLanguage
  /** The widget's `locale`, when the message came from the widget and it said one. */
  readonly locale?: string | undefined
  /** The reply counted against the plan (`Usage.reserveReply`): its credits go in `done`, and it is given back if the reply does not complete. */
  readonly reservation: Reservation
  /** The turns before the question as the caller gave them: read instead of the stored conversation's. */
  readonly history?: ReadonlyArray<Turn> | undefined
  /** The reply stops after this many tokens. */
  readonly maxTokens?: number | undefined
}

export class Replies extends Effect.Service<Replies>()("Conversations/Replies", {
  scoped: Effect.gen(function* () {
    const repo = yield* ConversationsRepo
    const answering = yield* Answering
    const usage = yield* Usage
    const config = yield* AppConfig
    const grace = Duration.seconds(config.replyResumeGraceSeconds ?? defaultGraceSeconds)
    // every reply, flusher and grace timer of this process; interrupted when the server stops
    const fibers = yield* FiberSet.make<void>()
    const live = new Map<MessageId, Live>()

    const stopTimer = (entry: Live) =>
      Effect.suspend(() => {
        const timer = entry.timer
        entry.timer = undefined
        return timer === undefined ? Effect.void : Fiber.interruptFork(timer)
      })

    /** With no reader, the reply has `grace` to get one before it is stopped. */
    const armTimer = (entry: Live) =>
      Effect.gen(function* () {
        yield* stopTimer(entry)
        if (entry.finished) return
        // forked from uninterruptible regions (the request's `send`, `finish`): each fiber is made interruptible
        entry.timer = yield* FiberSet.run(
          fibers,
          Effect.sleep(grace).pipe(
            Effect.interruptible,
            Effect.zipRight(
              Effect.suspend(() =>
                entry.readers === 0 && entry.generator !== undefined ? Fiber.interrupt(entry.generator) : Effect.void
              )
            ),
            Effect.asVoid
          )
        )
      })

    /** The reply's text so far: what a stopped or failed reply keeps. */
    interface Draft {
      content: string
    }

    /** The reply itself: its history, knowledge and glossary read, the model's tokens, then its sources and end. */
    const generate = (plan: ReplyPlan, log: ReplyLog, draft: Draft) =>
      Effect.gen(function* () {
        yield* log.emit({ type: "conversation", conversation_id: plan.conversationId, message_id: plan.messageId })
        // a conversation this message opened has no history: no statement to learn that
        const history: ReadonlyArray<Turn> = plan.history !== undefined
          ? plan.history.slice(-historyLimit)
          : plan.opened
          ? []
          : (yield* repo.finalMessages(plan.conversationId))
              .filter((m) => m.id !== plan.messageId)
              .slice(0, -1)
              .slice(-historyLimit)
              // a member's answer during a hand-off is, to the model, what was said to the visitor
              .map((m) => ({ role: m.role === "member" ? ("assistant" as const) : m.role, content: m.content }))
        const prepared = yield* answering.prepare({
          tenant: plan.tenant,
          agentId: plan.agentId,
          question: plan.question,
          instructions: plan.instructions,
          history,
          agentLanguage: plan.agentLanguage,
          locale: plan.locale
        })
        const tokens = plan.maxTokens === undefined ? prepared.tokens : Stream.take(prepared.tokens, plan.maxTokens)
        let output = 0
        yield* Stream.runForEach(tokens, (piece) => {
          draft.content += piece
          output++
          if (output > 1) return log.emit({ type: "token", content: piece })
          // past its first token the reply's statements (events, its end) wait behind the first tokens queued now
          return Effect.zipRight(log.emit({ type: "token", content: piece }), Effect.zipRight(log.firstTokenOut, takeLaterTurn))
        })
        yield* log.emit({ type: "sources", sources: prepared.sources })
        if (prepared.outcome === "fallback") yield* log.emit({ type: "escalation", message: escalationOffer(prepared.language) })
        // what the reply was, kept with it (`answered` may become `handed_off` when the conversation is escalated)
        const outcome = prepared.outcome
        const input = wordTokens(plan.question).length + prepared.grounding.reduce((n, g) => n + wordTokens(g.text).length, 0)
        yield* log.finish(
          {
            type: "done",
            message_id: plan.messageId,
            conversation_id: plan.conversationId,
            usage: { input_tokens: input, output_tokens: output, credits: plan.reservation.credits },
            outcome
          },
          (at, rest) =>
            repo.completeReply(plan.messageId, draft.content, prepared.sources, at, rest, { agentId: plan.agentId, outcome })
        )
      })

    /** A reply that failed ends with its `error` event, and its reservation is given back. */
    const failed = (plan: ReplyPlan, log: ReplyLog, draft: Draft, cause: Cause.Cause<AiError | AiUnavailable>) =>
      Effect.gen(function* () {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) yield* Effect.logWarning("reply failed", failure.value.message)
        else yield* Effect.logError("reply failed with a defect", cause)
        yield* log.finish(errorEventOf(failure), (at, rest) => repo.stopReply(plan.messageId, "failed", draft.content, at, rest))
        yield* usage.releaseReply(plan.tenant, plan.reservation)
      })

    /** A reply stopped while no one read it (see `armTimer`) ends with an `error` event; its reservation is given back. */
    const stopped = (plan: ReplyPlan, entry: Live, log: ReplyLog, draft: Draft) =>
      Effect.gen(function* () {
        if (entry.finished) return
        yield* Effect.logInfo(`reply ${plan.messageId} stopped: no reader within the grace period`)
        yield* log.finish(
          { type: "error", code: "service_unavailable", message: "The reply was stopped: no client read it; send the message again" },
          (at, rest) => repo.stopReply(plan.messageId, "interrupted", draft.content, at, rest)
        )
        yield* usage.releaseReply(plan.tenant, plan.reservation)
      })

    /**
     * Starts the reply's fiber and returns at once. Readers attach with `follow`;
     * until one does, the grace timer runs.
     */
    const start = (plan: ReplyPlan) =>
      Effect.gen(function* () {
        const entry = yield* makeLive
        live.set(plan.messageId, entry)
        const log = yield* makeReplyLog({
          entry,
          fibers,
          insertEvents: (rows) => repo.insertEvents(plan.messageId, rows),
          onFinished: Effect.zipRight(stopTimer(entry), Effect.sync(() => live.delete(plan.messageId)))
        })
        const draft: Draft = { content: "" }
        entry.generator = yield* FiberSet.run(
          fibers,
          generate(plan, log, draft).pipe(
            Effect.interruptible,
            Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.interrupt : failed(plan, log, draft, cause))),
            Effect.onInterrupt(() => stopped(plan, entry, log, draft)),
            Effect.asVoid
          )
        )
        yield* armTimer(entry)
      })

    /** The events of a reply of this process after `after`, following it to its end; none when not here. */
    const followLocal = (messageId: MessageId, after: number): Option.Option<Stream.Stream<Numbered>> => {
      const entry = live.get(messageId)
      if (entry === undefined) return Option.none()
      return Option.some(
        Stream.unwrapScoped(
          Effect.gen(function* () {
            yield* Effect.acquireRelease(
              Effect.suspend(() => {
                entry.readers++
                return stopTimer(entry)
              }),
              () =>
                Effect.suspend(() => {
                  entry.readers--
                  return entry.readers === 0 ? armTimer(entry) : Effect.void
                })
            )
            let cursor = after
            return entry.count.changes.pipe(
              Stream.map((count) => {
                const out = entry.events.slice(cursor, Math.max(cursor, count))
                cursor = Math.max(cursor, count)
                // a reader already past the end (its Last-Event-ID was the last) ends with the reply too
                return { out, end: out.some((e) => e.terminal) || (entry.finished && cursor >= entry.events.length) }
              }),
              Stream.takeUntil((step) => step.end),
              Stream.mapConcat((step) => step.out)
            )
          })
        )
      )
    }

    /**
     * The events after `after` from the database, for a reply of another
     * process (or finished): polled on the Clock while it is still generating,
     * for at most twice the grace without news.
     */
    const followStored = (messageId: MessageId, after: number): Stream.Stream<Numbered> =>
      Stream.unwrap(
        Effect.sync(() => {
          let cursor = after
          let quietSince: number | undefined
          let ended = false
          const poll = Effect.gen(function* () {
            if (ended) return Option.none<ReadonlyArray<Numbered>>()
            const status = yield* repo.messageStatus(messageId)
            const rows = yield* repo.eventsAfter(messageId, cursor)
            const out = rows.map((r) => ({ id: r.seq, data: r.data, terminal: terminalData(r.data) }))
            if (out.length > 0) cursor = out[out.length - 1]!.id
            const at = yield* Clock.currentTimeMillis
            if (out.some((e) => e.terminal) || status !== "generating") {
              ended = true
              return Option.some(out)
            }
            if (out.length > 0) quietSince = at
            quietSince ??= at
            if (at - quietSince > 2 * Duration.toMillis(grace)) {
              ended = true
              const gone: Numbered = {
                id: cursor + 1,
                data: JSON.stringify({
                  type: "error",
                  code: "service_unavailable",
                  message: "The reply is no longer being generated; send the message again"
                } satisfies StreamEvent),
                terminal: true
              }
              return Option.some([...out, gone])
            }
            if (out.length === 0) yield* Effect.sleep(Duration.millis(250))
            return Option.some(out)
          })
          return Stream.repeatEffectOption(
            Effect.flatMap(poll, (o) => (Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(Option.none())))
          ).pipe(Stream.flattenIterables)
        })
      )

    /** A reply's events after `after`, to its end, wherever it is generated. */
    const follow = (messageId: MessageId, after: number): Stream.Stream<Numbered> =>
      Option.getOrElse(followLocal(messageId, after), () => followStored(messageId, after))

    return { start, follow } as const
  }),
  dependencies: [ConversationsRepo.Default, Answering.Default, Usage.Default]
}) {}

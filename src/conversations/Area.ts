/**
 * The conversations area as the composition root uses it: its programs, its API group, its workers, and the
 * adapters of the ports it serves (the leads area's `ConversationLink`; the edge's `ReplayableStreams` is the
 * completions area's, over `replayMessages` of `Http.ts`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import type { ConversationId, LeadId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Agents } from "../agents/Agents.js"
import { background, queueWorker } from "../Background.js"
import { AppConfig } from "../Config.js"
import { Retrieval } from "../knowledge/Retrieval.js"
import { ConversationLink } from "../leads/ConversationLink.js"
import { ConversationHandoff } from "../tickets/ConversationHandoff.js"
import { Tickets } from "../tickets/Tickets.js"
import { Conversations } from "./Conversations.js"
import { ConversationsRepo } from "./ConversationsRepo.js"
import { ConversationFeedback } from "./Feedback.js"
import { Handoff } from "./Handoff.js"
import { ConversationsHttp } from "./Http.js"
import { ConversationLifecycle, IDLE_MAX_ATTEMPTS, IDLE_QUEUE, replyEventPruneEveryMillis } from "./Lifecycle.js"
import { supervise } from "../../layers/Supervise.js"

/**
 * One instance: the widget's chat programs share its live replies and its hand-off (whose in-process signals
 * wake the widget streams of PGlite), the same instance the tickets' port below is served by.
 */
export const Live = Layer.mergeAll(Conversations.Default, Handoff.Default, ConversationLifecycle.Default, ConversationFeedback.Default).pipe(
  Layer.provide([Retrieval.Default, Agents.Default, Tickets.Default])
)

/** A member's message on an escalated ticket, and its resolution, reach the conversation's hand-off. */
export const ConversationHandoffLive = Layer.effect(
  ConversationHandoff,
  Effect.map(Handoff, (handoff) => ({ memberReplied: handoff.memberReplied, ticketClosed: handoff.ticketClosed }))
).pipe(Layer.provide(Handoff.Default), Layer.provide(Agents.Default))

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = ConversationsHttp
export const ApiServices = [Authentication, Conversations, ConversationFeedback] as const

/** A lead captured in a conversation becomes its `lead_id`, and a deleted one stops being it. */
export const ConversationLinkLive = Layer.effect(
  ConversationLink,
  Effect.map(ConversationsRepo, (repo) => ({
    linkLead: (tenant: Tenant, conversationId: ConversationId, leadId: LeadId) => repo.setLead(tenant, conversationId, leadId),
    unlinkLead: (tenant: Tenant, leadId: LeadId) => repo.clearLead(tenant, leadId)
  }))
).pipe(Layer.provide(ConversationsRepo.Default))

/** The pruner of reply and hand-off events past their retention, and the idle timer. */
export const Workers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const lifecycle = yield* ConversationLifecycle
    const config = yield* AppConfig
    return Layer.mergeAll(
      background(
        supervise(
          "reply-events-pruner",
          Effect.forever(
            Effect.zipRight(
              Effect.zipRight(lifecycle.pruneReplyEvents, lifecycle.pruneConversationEvents),
              Effect.sleep(replyEventPruneEveryMillis)
            )
          )
        )
      ),
      // one job per conversation (its key): ends it once idle
      queueWorker({
        queue: IDLE_QUEUE,
        concurrency: 4,
        // unset (test configs): only local enqueues wake it, so TestClock jumps do not spin it
        pollMillis: config.conversationIdlePollMillis ?? 366 * 24 * 60 * 60 * 1000,
        maxAttempts: IDLE_MAX_ATTEMPTS,
        handle: lifecycle.handleIdle
      })
    )
  })
)

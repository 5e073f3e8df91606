/**
 * Migration 0042: replies written before outcomes existed get one (with sources: answered; without: fallback;
 * the last reply before a hand-off request: handed_off) and their agent; visitor messages, replies still
 * generating or failed, and replies after the hand-off request stay as they were or get what they are.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { testDatabaseLayer } from "../support/database.js"

const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0042"))

it.effect("0042 fills outcome and agent_id of the replies already written", () =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* runMigrations(before)
    yield* sql`insert into workspaces (id, name, owner_email, plan, created_at)
      values ('ws_migration0042', 'm', 'o@example.com', 'free', now())`
    yield* sql`insert into agents (id, workspace_id, environment, type, name, slug, created_at, updated_at)
      values ('agt_migration0042', 'ws_migration0042', 'test', 'support', 'Desk', 'desk', now(), now())`
    const conversation = (id: string, handoffAt: string | null) =>
      sql`insert into conversations (id, workspace_id, environment, agent_id, channel, status, metadata, started_at,
          last_activity_at, handoff_status, handoff_requested_at)
        values (${id}, 'ws_migration0042', 'test', 'agt_migration0042', 'widget', 'open', '{}'::jsonb,
          '2026-10-01T09:00:00Z', '2026-10-01T09:30:00Z', ${handoffAt === null ? null : "requested"}, ${handoffAt})`
    const message = (id: string, conversationId: string, role: string, status: string, sources: string, at: string) =>
      sql`insert into messages (id, workspace_id, environment, conversation_id, role, status, content, sources, created_at)
        values (${id}, 'ws_migration0042', 'test', ${conversationId}, ${role}, ${status}, 'text', ${sources}::jsonb, ${at})`
    const source = JSON.stringify([{ type: "qa", id: "qa_1", title: "Delivery" }])
    const at = (minute: number) => `2026-10-01T09:${String(minute).padStart(2, "0")}:00Z`

    yield* conversation("conv_plain", null)
    yield* message("msg_p_user1", "conv_plain", "user", "complete", "[]", at(0))
    yield* message("msg_p_answer", "conv_plain", "assistant", "complete", source, at(1))
    yield* message("msg_p_user2", "conv_plain", "user", "complete", "[]", at(2))
    yield* message("msg_p_fallback", "conv_plain", "assistant", "complete", "[]", at(3))
    yield* message("msg_p_user3", "conv_plain", "user", "complete", "[]", at(4))
    yield* message("msg_p_failed", "conv_plain", "assistant", "failed", "[]", at(5))
    yield* message("msg_p_generating", "conv_plain", "assistant", "generating", "[]", at(6))

    yield* conversation("conv_handed", at(12))
    yield* message("msg_h_user1", "conv_handed", "user", "complete", "[]", at(10))
    yield* message("msg_h_answer", "conv_handed", "assistant", "complete", source, at(10))
    yield* message("msg_h_user2", "conv_handed", "user", "complete", "[]", at(11))
    yield* message("msg_h_last", "conv_handed", "assistant", "complete", "[]", at(11))
    yield* message("msg_h_member", "conv_handed", "member", "complete", "[]", at(13))
    yield* message("msg_h_after", "conv_handed", "assistant", "complete", source, at(14))

    yield* runMigrations(migrations)
    const rows = yield* sql<{ id: string; outcome: string | null; agent_id: string | null }>`
      select id, outcome, agent_id from messages order by id`
    expect(Object.fromEntries(rows.map((r) => [r.id, [r.outcome, r.agent_id]]))).toEqual({
      msg_p_user1: [null, null],
      msg_p_answer: ["answered", "agt_migration0042"],
      msg_p_user2: [null, null],
      msg_p_fallback: ["fallback", "agt_migration0042"],
      msg_p_user3: [null, null],
      msg_p_failed: [null, null],
      msg_p_generating: [null, null],
      msg_h_user1: [null, null],
      msg_h_answer: ["answered", "agt_migration0042"],
      msg_h_user2: [null, null],
      msg_h_last: ["handed_off", "agt_migration0042"],
      msg_h_member: [null, null],
      msg_h_after: ["answered", "agt_migration0042"]
    })
    // the backfilled replies are the agent's replies the insights read, through the new index's range
    const replies = yield* sql<{ n: number }>`
      select count(*)::int as n from messages where agent_id = 'agt_migration0042' and created_at >= '2026-10-01'`
    expect(replies[0]!.n).toBe(5)
  }).pipe(Effect.provide(testDatabaseLayer), Effect.orDie)
)

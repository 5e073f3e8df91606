/**
 * What each reply was: `outcome` (`answered`: it drew on knowledge; `fallback`: nothing relevant, the fixed
 * fallback; `handed_off`: the last reply before the conversation went to people), and the agent whose reply it
 * is (`agent_id`), both on completed assistant replies only (null on every other message), so an agent's
 * replies of a period are one range of `messages_agent_replies`, whatever the agent's history holds. The
 * conversations of an agent by start and by hand-off request get indexes of their own for the same reason.
 *
 * Existing replies: a reply with sources answered, one without fell back (the fallback is the only reply that
 * draws on nothing), and a conversation's last reply before its hand-off request was handed off (only the
 * latest request is known).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table messages
      add column outcome text check (outcome in ('answered', 'fallback', 'handed_off')),
      add column agent_id text`
  yield* sql`
    update messages set
      outcome = case when jsonb_array_length(messages.sources) > 0 then 'answered' else 'fallback' end,
      agent_id = conversations.agent_id
    from conversations
    where conversations.id = messages.conversation_id and messages.role = 'assistant' and messages.status = 'complete'`
  yield* sql`
    update messages set outcome = 'handed_off'
    where id in (
      select last.id from conversations
      cross join lateral (
        select m.id from messages m
        where m.conversation_id = conversations.id and m.role = 'assistant' and m.status = 'complete'
          and m.created_at <= conversations.handoff_requested_at
        order by m.seq desc limit 1
      ) last
      where conversations.handoff_requested_at is not null
    )`
  yield* sql`create index messages_agent_replies on messages (agent_id, created_at) where agent_id is not null`
  yield* sql`create index conversations_agent_started on conversations (agent_id, started_at)`
  yield* sql`
    create index conversations_agent_handoffs on conversations (agent_id, handoff_requested_at)
    where handoff_requested_at is not null`
})

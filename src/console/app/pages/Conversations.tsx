/**
 * Conversations (filtered by agent and status) with their messages, ratings and hand-off, and the leads captured,
 * deletable. A member answers a handed-off conversation here: the reply is a message on its ticket (the ticket's
 * own endpoint, so it reaches the widget and the thread as one from the ticket's page does), and a release gives
 * it back to the agent.
 */
import type { Agent } from "../../../../schema/Agents.js"
import type { Conversation, ConversationWithMessages, Handoff, Message } from "../../../../schema/Conversations.js"
import type { Lead } from "../../../../schema/Leads.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import {
  ConfirmButton,
  Empty,
  ErrorBox,
  Field,
  Loaded,
  LoadMore,
  Select,
  Status,
  useAction,
  useMember,
  usePagedList,
  usePolling,
  useResource,
  when
} from "../ui.js"

const useAgents = (client: Client) => useResource(() => client.list<Agent>("/v1/agents", { limit: "100" }), [client])

const agentOptions = (agents: ReadonlyArray<Agent> | undefined): ReadonlyArray<readonly [string, string]> => [
  ["", "Any agent"],
  ...(agents ?? []).map((a) => [a.id, a.name] as const)
]

export const ConversationsPage = ({ client }: { client: Client }) => {
  const agents = useAgents(client)
  const [agentId, setAgentId] = useState("")
  const [status, setStatus] = useState("")
  const conversations = usePagedList(
    (limit, after) => client.list<Conversation>("/v1/conversations", { limit, starting_after: after, agent_id: agentId, status }),
    [agentId, status]
  )
  const name = (id: string) => agents.data?.data.find((a) => a.id === id)?.name ?? id
  return (
    <section>
      <h1>Conversations</h1>
      <form class="card filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <Select label="Agent" value={agentId} onChange={setAgentId} options={agentOptions(agents.data?.data)} />
        <Select
          label="Status"
          value={status}
          onChange={setStatus}
          options={[
            ["", "Any"],
            ["open", "Open"],
            ["ended", "Ended"]
          ]}
        />
      </form>
      <Loaded resource={conversations} what="conversations">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No conversations match.</Empty>
          ) : (
            <table>
              <caption>Conversations, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Status</th>
                  <th scope="col">Messages</th>
                  <th scope="col">Lead</th>
                  <th scope="col">Hand-off</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <a href={`#/conversations/${c.id}`}>{when(c.started_at)}</a>
                    </td>
                    <td>{name(c.agent_id)}</td>
                    <td>{c.channel}</td>
                    <td>
                      <Status value={c.status} />
                    </td>
                    <td>{c.message_count}</td>
                    <td>{c.lead_id ?? "—"}</td>
                    <td>{c.handoff === null ? "—" : <Status value={c.handoff.status} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <LoadMore list={conversations} what="conversations" />
    </section>
  )
}

const who = (role: Message["role"]) => (role === "user" ? "Visitor" : role === "member" ? "Member" : "Agent")

const open = (handoff: Handoff | null) => handoff !== null && handoff.status !== "closed"

/** How the replies were rated: "2 helpful, 1 not helpful", or null when none is. */
const ratings = (messages: ReadonlyArray<Message>): string | null => {
  const up = messages.filter((m) => m.feedback?.rating === "up").length
  const down = messages.filter((m) => m.feedback?.rating === "down").length
  return up + down === 0 ? null : `${up} helpful, ${down} not helpful`
}

/** Checks for the visitor's new messages this often while a person has the conversation. */
const handoffRefreshMillis = 5_000

/** The hand-off's state, and while it is open the member's answer (a message on its ticket) and the release. */
const HandoffCard = ({ client, c, reload }: { client: Client; c: ConversationWithMessages; reload: () => void }) => {
  const handoff = c.handoff!
  const [member, setMember, headers] = useMember()
  const [reply, setReply] = useState("")
  const send = useAction()
  const release = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    const path = `/v1/tickets/${handoff.ticket_public_id}/messages`
    if (await send.run(() => client.call("POST", path, { body: { body: reply }, headers }))) {
      setReply("")
      reload()
    }
  }
  return (
    <div class="card" role="region" aria-label="Hand-off">
      <p>
        Hand-off <Status value={handoff.status} /> · ticket{" "}
        <a href={`#/tickets/${handoff.ticket_public_id}`}>{handoff.ticket_public_id}</a> · since {when(handoff.requested_at)}
        {handoff.updated_at === handoff.requested_at ? "" : ` · changed ${when(handoff.updated_at)}`}
      </p>
      {!open(handoff) ? (
        <p class="small muted">The agent answers this conversation again.</p>
      ) : (
        <form onSubmit={submit}>
          <p class="small muted">
            {handoff.status === "requested" ? "Waiting for a person" : "A person has this chat"}: the agent does not reply. An
            answer here reaches the visitor's open chat (or their e-mail) and the ticket's thread.
          </p>
          <Field label="Answer the visitor" value={reply} onInput={setReply} multiline={3} required name="answer" />
          <Field label="Acting as member" value={member} onInput={setMember} name="member" hint="The member id your answer is recorded under." />
          <div class="actions">
            <button type="submit" class="primary" disabled={send.pending}>
              Send to the visitor
            </button>
            <button
              type="button"
              disabled={release.pending}
              onClick={async () => {
                if (await release.run(() => client.call("POST", `/v1/conversations/${c.id}/release`))) reload()
              }}
            >
              Give back to the agent
            </button>
          </div>
          {send.error === undefined ? null : <ErrorBox error={send.error} />}
          {release.error === undefined ? null : <ErrorBox error={release.error} />}
        </form>
      )}
    </div>
  )
}

export const ConversationPage = ({ client, conversationId }: { client: Client; conversationId: string }) => {
  const conversation = useResource<ConversationWithMessages>(
    () => client.call("GET", `/v1/conversations/${conversationId}`),
    [conversationId]
  )
  // the visitor's messages arrive while a person has it
  usePolling(open(conversation.data?.handoff ?? null), handoffRefreshMillis, () => conversation.reload())
  return (
    <section>
      <p class="crumbs">
        <a href="#/conversations">Conversations</a> / {conversationId}
      </p>
      <h1>Conversation</h1>
      <Loaded resource={conversation} what="the conversation">
        {(c) => (
          <>
            <p>
              <Status value={c.status} /> · {c.channel} · started {when(c.started_at)}
              {c.ended_at === null ? "" : ` · ended ${when(c.ended_at)}`}
              {ratings(c.messages) === null ? "" : ` · rated ${ratings(c.messages)}`}
            </p>
            {c.messages.length === 0 ? <Empty>No messages.</Empty> : null}
            <ol class="chat">
              {c.messages.map((m) => (
                <li key={m.id} class={`turn turn-${m.role}`}>
                  <span class="who">
                    {who(m.role)} · {when(m.created_at)}
                  </span>
                  <div class="bubble">{m.content}</div>
                  {m.sources.length === 0 ? null : (
                    <p class="small muted">Sources: {m.sources.map((s) => s.title).join("; ")}</p>
                  )}
                  {m.feedback == null ? null : (
                    <p class={`small feedback feedback-${m.feedback.rating}`}>
                      Rated {m.feedback.rating === "up" ? "helpful" : "not helpful"} · {when(m.feedback.updated_at)}
                      {m.feedback.comment === null ? "" : `: “${m.feedback.comment}”`}
                    </p>
                  )}
                </li>
              ))}
            </ol>
            {c.handoff === null ? null : <HandoffCard client={client} c={c} reload={conversation.reload} />}
          </>
        )}
      </Loaded>
    </section>
  )
}

export const LeadsPage = ({ client }: { client: Client }) => {
  const agents = useAgents(client)
  const [agentId, setAgentId] = useState("")
  const [email, setEmail] = useState("")
  const leads = usePagedList(
    (limit, after) => client.list<Lead>("/v1/leads", { limit, starting_after: after, agent_id: agentId, email: email.trim() }),
    [agentId, email]
  )
  const remove = useAction()
  return (
    <section>
      <h1>Leads</h1>
      <form class="card filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <Select label="Agent" value={agentId} onChange={setAgentId} options={agentOptions(agents.data?.data)} />
        <Field label="E-mail" type="email" value={email} onInput={setEmail} name="lead-email" />
      </form>
      {remove.error === undefined ? null : <ErrorBox error={remove.error} />}
      <Loaded resource={leads} what="leads">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No leads match.</Empty>
          ) : (
            <table>
              <caption>Leads, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">E-mail</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Conversation</th>
                  <th scope="col">Delete</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((lead) => (
                  <tr key={lead.id}>
                    <td>{lead.name ?? "—"}</td>
                    <td>{lead.email ?? "—"}</td>
                    <td>{lead.phone ?? "—"}</td>
                    <td>
                      {lead.conversation_id === null ? "—" : <a href={`#/conversations/${lead.conversation_id}`}>{lead.conversation_id}</a>}
                    </td>
                    <td>
                      <ConfirmButton
                        label="Delete"
                        what={lead.email ?? lead.name ?? lead.id}
                        confirm="Delete this lead's personal data?"
                        onConfirm={async () => {
                          if (await remove.run(() => client.call("DELETE", `/v1/leads/${lead.id}`))) leads.reload()
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <LoadMore list={leads} what="leads" />
    </section>
  )
}

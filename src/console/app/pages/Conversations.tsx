/** Conversations (filtered by agent and status) with their messages, and the leads captured, deletable. */
import type { Agent } from "../../../../schema/Agents.js"
import type { Conversation, ConversationWithMessages } from "../../../../schema/Conversations.js"
import type { Lead } from "../../../../schema/Leads.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, LoadMore, Select, Status, useAction, usePagedList, useResource, when } from "../ui.js"

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

export const ConversationPage = ({ client, conversationId }: { client: Client; conversationId: string }) => {
  const conversation = useResource<ConversationWithMessages>(
    () => client.call("GET", `/v1/conversations/${conversationId}`),
    [conversationId]
  )
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
            </p>
            {c.messages.length === 0 ? <Empty>No messages.</Empty> : null}
            <ol class="chat">
              {c.messages.map((m) => (
                <li key={m.id} class={`turn turn-${m.role}`}>
                  <span class="who">
                    {m.role === "user" ? "Visitor" : "Agent"} · {when(m.created_at)}
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

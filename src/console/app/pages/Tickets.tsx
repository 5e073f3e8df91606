/**
 * Tickets: the inbox with its filters, and a ticket's thread where a member
 * replies and changes the status (sent with `Service-Member-Id`, so the
 * change is the member's).
 */
import type { Ticket, TicketWithThread } from "../../../../schema/Tickets.js"
import { useState } from "preact/hooks"
import { type Client, query } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, Select, Status, useAction, useMember, useResource, when } from "../ui.js"

const statuses = ["open", "pending_user", "resolved"] as const
const priorities = ["low", "normal", "high", "urgent"] as const
const origins = ["api", "widget_button", "ai_escalation", "form"] as const
const label = (value: string) => value.replace(/_/g, " ")

interface Filters {
  status: Array<string>
  priority: string
  origin: string
  tag: string
}

const filtersOf = (hash: string): Filters => {
  const params = new URLSearchParams(hash.split("?")[1] ?? "")
  return {
    status: params.getAll("status"),
    priority: params.get("priority") ?? "",
    origin: params.get("origin") ?? "",
    tag: params.get("tag") ?? ""
  }
}

export const TicketsPage = ({ client }: { client: Client }) => {
  const [filters, setFilters] = useState<Filters>(() => filtersOf(location.hash))
  const [cursor, setCursor] = useState<Array<string>>([])
  const after = cursor[cursor.length - 1]
  const tickets = useResource(
    () =>
      client.list<Ticket>("/v1/tickets", {
        limit: "25",
        status: filters.status,
        priority: filters.priority,
        origin: filters.origin,
        tag: filters.tag.trim(),
        include: "total_count",
        starting_after: after
      }),
    [JSON.stringify(filters), after]
  )
  const change = (next: Partial<Filters>) => {
    const merged = { ...filters, ...next }
    setFilters(merged)
    setCursor([])
    history.replaceState(null, "", `#/tickets${query({ ...merged, status: merged.status })}`)
  }
  return (
    <section>
      <h1>Tickets</h1>
      <form class="card filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <fieldset>
          <legend>Status</legend>
          {statuses.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                checked={filters.status.includes(s)}
                onChange={(e) =>
                  change({
                    status: (e.currentTarget as HTMLInputElement).checked
                      ? [...filters.status, s]
                      : filters.status.filter((x) => x !== s)
                  })
                }
              />
              {label(s)}
            </label>
          ))}
        </fieldset>
        <Select
          label="Priority"
          value={filters.priority}
          onChange={(priority) => change({ priority })}
          options={[["", "Any"], ...priorities.map((p) => [p, p] as const)]}
        />
        <Select
          label="Origin"
          value={filters.origin}
          onChange={(origin) => change({ origin })}
          options={[["", "Any"], ...origins.map((o) => [o, label(o)] as const)]}
        />
        <Field label="Tag" value={filters.tag} onInput={(tag) => change({ tag })} name="tag" />
      </form>
      <Loaded resource={tickets} what="tickets">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No tickets match.</Empty>
          ) : (
            <>
              <table>
                <caption>Tickets, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Subject</th>
                    <th scope="col">Status</th>
                    <th scope="col">Priority</th>
                    <th scope="col">Origin</th>
                    <th scope="col">Visitor</th>
                    <th scope="col">Tags</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((t) => (
                    <tr key={t.public_id}>
                      <td>
                        <a href={`#/tickets/${t.public_id}`}>{t.subject}</a>
                      </td>
                      <td>
                        <Status value={t.status} />
                      </td>
                      <td>{t.priority}</td>
                      <td>{label(t.origin)}</td>
                      <td>{t.visitor_email ?? t.visitor_name ?? "—"}</td>
                      <td>{t.tags.join(", ")}</td>
                      <td>{when(t.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <div class="pager">
                <button type="button" disabled={cursor.length === 0} onClick={() => setCursor(cursor.slice(0, -1))}>
                  Newer
                </button>
                <button
                  type="button"
                  disabled={!page.hasMore || page.nextCursor === null}
                  onClick={() => setCursor([...cursor, page.nextCursor!])}
                >
                  Older
                </button>
              </div>
            </>
          )
        }
      </Loaded>
    </section>
  )
}

const ThreadItem = ({ item }: { item: TicketWithThread["thread"][number] }) =>
  item.object === "ticket_message" ? (
    <li class={`message message-${item.author_type}`}>
      <p class="meta">
        <strong class="author">{item.author_type}</strong>
        {item.author_id === null ? "" : ` (${item.author_id})`} · {when(item.created_at)}
      </p>
      <p class="body">{item.body}</p>
    </li>
  ) : (
    <li class="event">
      <span class="muted">
        {label(item.type)}
        {item.from === null && item.to === null ? "" : `: ${item.from ?? "—"} → ${item.to ?? "—"}`} by {item.actor.type}
        {item.actor.id === null ? "" : ` ${item.actor.id}`} · {when(item.created_at)}
      </span>
    </li>
  )

export const TicketPage = ({ client, publicId }: { client: Client; publicId: string }) => {
  const ticket = useResource<TicketWithThread>(() => client.call("GET", `/v1/tickets/${publicId}`), [publicId])
  const [member, setMember] = useMember()
  const [reply, setReply] = useState("")
  const [tags, setTags] = useState<string | undefined>(undefined)
  const send = useAction()
  const update = useAction()
  const erase = useAction()
  const headers: Record<string, string> = member.trim() === "" ? {} : { "service-member-id": member.trim() }
  const submit = async (e: Event) => {
    e.preventDefault()
    if (await send.run(() => client.call("POST", `/v1/tickets/${publicId}/messages`, { body: { body: reply }, headers }))) {
      setReply("")
      ticket.reload()
    }
  }
  const patch = async (body: Record<string, unknown>) => {
    if (await update.run(() => client.call("PATCH", `/v1/tickets/${publicId}`, { body, headers }))) ticket.reload()
  }
  return (
    <section>
      <p class="crumbs">
        <a href="#/tickets">Tickets</a> / {publicId}
      </p>
      <Loaded resource={ticket} what="the ticket">
        {(t) => (
          <>
            <h1>{t.subject}</h1>
            <p>
              <Status value={t.status} /> · priority {t.priority} · {label(t.origin)} · {t.visitor_name ?? "—"}{" "}
              {t.visitor_email === null ? "" : `<${t.visitor_email}>`} · opened {when(t.created_at)}
            </p>
            <div class="card inline-form">
              <Field
                label="Acting as member"
                value={member}
                onInput={setMember}
                name="member"
                hint="The member id your replies and changes are recorded under."
              />
              <Select
                label="Status"
                value={t.status}
                onChange={(status) => patch({ status })}
                options={statuses.map((s) => [s, label(s)] as const)}
              />
              <Select
                label="Priority"
                value={t.priority}
                onChange={(priority) => patch({ priority })}
                options={priorities.map((p) => [p, p] as const)}
              />
              <form
                class="inline-form"
                onSubmit={async (e) => {
                  e.preventDefault()
                  const list = (tags ?? t.tags.join(", ")).split(",").map((s) => s.trim()).filter((s) => s !== "")
                  await patch({ tags: list })
                  setTags(undefined)
                }}
              >
                <Field
                  label="Tags"
                  value={tags ?? t.tags.join(", ")}
                  onInput={setTags}
                  hint="Separated by commas; saving replaces the list."
                  name="tags"
                />
                <button type="submit">Save tags</button>
              </form>
              {update.error === undefined ? null : <ErrorBox error={update.error} />}
            </div>
            <div class="actions card">
              <ConfirmButton
                label="Erase personal data"
                confirm="Replace the visitor's name, e-mail and every message with [deleted]? This cannot be undone."
                onConfirm={async () => {
                  if (await erase.run(() => client.call("DELETE", `/v1/tickets/${publicId}`, { headers }))) ticket.reload()
                }}
              />
              {erase.error === undefined ? null : <ErrorBox error={erase.error} />}
            </div>
            <h2>Thread</h2>
            {t.thread.length === 0 ? <Empty>No messages yet.</Empty> : null}
            <ol class="thread">
              {t.thread.map((item) => (
                <ThreadItem item={item} key={item.id} />
              ))}
            </ol>
            <form class="card" onSubmit={submit}>
              <Field label="Reply" value={reply} onInput={setReply} multiline={4} required name="reply" />
              <button type="submit" class="primary" disabled={send.pending}>
                Send reply
              </button>
              {send.error === undefined ? null : <ErrorBox error={send.error} />}
            </form>
          </>
        )}
      </Loaded>
    </section>
  )
}

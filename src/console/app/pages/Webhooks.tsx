/**
 * Webhooks: subscriptions (the secret shown once, on creation and rotation),
 * a subscription's deliveries with their attempts, retry, test, reactivate.
 */
import type { Delivery, Subscription } from "../../../../schema/Webhooks.js"
import { EventTypes as eventTypes } from "../../../../schema/EventTypes.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, CopySecret, Empty, ErrorBox, Field, Loaded, LoadMore, Status, useAction, usePagedList, usePolling, useResource, when } from "../ui.js"


const EventsPicker = ({ events, onChange }: { events: ReadonlyArray<string>; onChange: (events: Array<string>) => void }) => (
  <fieldset class="events">
    <legend>Events</legend>
    {eventTypes.map((type) => (
      <label key={type} class="check">
        <input
          type="checkbox"
          checked={events.includes(type)}
          onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked ? [...events, type] : events.filter((x) => x !== type))}
        />
        <code>{type}</code>
      </label>
    ))}
  </fieldset>
)

/** A subscription's URL and events, changed in place. */
const EditSubscription = ({ client, subscription, onSaved }: { client: Client; subscription: Subscription; onSaved: () => void }) => {
  const [url, setUrl] = useState(subscription.url)
  const [events, setEvents] = useState<Array<string>>([...subscription.events])
  const [saved, setSaved] = useState(false)
  const save = useAction()
  return (
    <form
      class="card"
      aria-labelledby="edit-webhook"
      onSubmit={async (e) => {
        e.preventDefault()
        setSaved(false)
        if (await save.run(() => client.call("PATCH", `/v1/webhooks/${subscription.id}`, { body: { url, events } }))) {
          setSaved(true)
          onSaved()
        }
      }}
    >
      <h2 id="edit-webhook">Edit subscription</h2>
      <Field label="Receiver URL" type="url" value={url} onInput={setUrl} required name="url" />
      <EventsPicker events={events} onChange={setEvents} />
      <button type="submit" class="primary" disabled={save.pending}>
        Save subscription
      </button>{" "}
      <span role="status">{saved ? "Saved." : ""}</span>
      {save.error === undefined ? null : <ErrorBox error={save.error} />}
    </form>
  )
}

export const WebhooksPage = ({ client }: { client: Client }) => {
  const subscriptions = usePagedList((limit, after) => client.list<Subscription>("/v1/webhooks", { limit, starting_after: after }), [client])
  const [url, setUrl] = useState("")
  const [events, setEvents] = useState<Array<string>>(["ticket.created"])
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const create = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    await create.run(async () => {
      const created = await client.call<{ secret: string }>("POST", "/v1/webhooks", { body: { url, events } })
      setSecret(created.secret)
      setUrl("")
      subscriptions.reload()
    })
  }
  return (
    <section>
      <h1>Webhooks</h1>
      {secret === undefined ? null : <CopySecret label="Signing secret, shown this once" secret={secret} onDone={() => setSecret(undefined)} />}
      <form class="card" onSubmit={submit} aria-labelledby="new-webhook">
        <h2 id="new-webhook">New subscription</h2>
        <Field label="Receiver URL" type="url" value={url} onInput={setUrl} required name="url" />
        <EventsPicker events={events} onChange={setEvents} />
        <button type="submit" class="primary" disabled={create.pending}>
          Create subscription
        </button>
        {create.error === undefined ? null : <ErrorBox error={create.error} />}
      </form>
      <Loaded resource={subscriptions} what="subscriptions">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No subscriptions yet.</Empty>
          ) : (
            <table>
              <caption>Subscriptions</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((s) => (
                  <tr key={s.id}>
                    <td>
                      <a href={`#/webhooks/${s.id}`}>{s.url}</a>
                    </td>
                    <td>{s.events.length}</td>
                    <td>
                      <Status value={s.is_active ? (s.degraded ? "degraded" : "active") : "inactive"} />
                    </td>
                    <td>{when(s.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <LoadMore list={subscriptions} what="subscriptions" />
    </section>
  )
}

interface Attempt {
  attempted_at: string
  response_status: number | null
  duration_ms: number
  response_body_excerpt: string | null
  error: string | null
}

const DeliveryRow = ({ client, webhookId, delivery, onChanged }: { client: Client; webhookId: string; delivery: Delivery; onChanged: () => void }) => {
  const [attempts, setAttempts] = useState<ReadonlyArray<Attempt> | undefined>(undefined)
  const action = useAction()
  const base = `/v1/webhooks/${webhookId}/deliveries/${delivery.id}`
  return (
    <li class="delivery">
      <p>
        <code>{delivery.event_type}</code> <Status value={delivery.status} /> · {delivery.attempt_count} attempt{delivery.attempt_count === 1 ? "" : "s"} · last{" "}
        {when(delivery.last_attempted_at)}
        {delivery.response_status === null ? "" : ` · HTTP ${delivery.response_status}`}
        {delivery.next_attempt_at === null ? "" : ` · next ${when(delivery.next_attempt_at)}`}
      </p>
      {delivery.last_error === null ? null : <p class="source-error">{delivery.last_error}</p>}
      <button
        type="button"
        aria-expanded={attempts !== undefined}
        onClick={() =>
          attempts === undefined
            ? action.run(async () => setAttempts((await client.call<{ attempts: Array<Attempt> }>("GET", base)).attempts))
            : setAttempts(undefined)
        }
      >
        {attempts === undefined ? "Show attempts" : "Hide attempts"}
      </button>{" "}
      {delivery.status === "succeeded" ? null : (
        <button type="button" onClick={() => action.run(() => client.call("POST", `${base}/retry`)).then(onChanged)}>
          Retry now
        </button>
      )}
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
      {attempts === undefined ? null : attempts.length === 0 ? (
        <Empty>No attempts yet.</Empty>
      ) : (
        <ol class="attempts">
          {attempts.map((a) => (
            <li key={a.attempted_at}>
              {when(a.attempted_at)} · {a.response_status === null ? "no response" : `HTTP ${a.response_status}`} · {a.duration_ms} ms
              {a.error === null ? "" : ` · ${a.error}`}
              {a.response_body_excerpt === null ? null : <pre>{a.response_body_excerpt}</pre>}
            </li>
          ))}
        </ol>
      )}
    </li>
  )
}

export const WebhookPage = ({ client, webhookId }: { client: Client; webhookId: string }) => {
  const subscription = useResource<Subscription>(() => client.call("GET", `/v1/webhooks/${webhookId}`), [webhookId])
  const deliveries = usePagedList(
    (limit, after) => client.list<Delivery>(`/v1/webhooks/${webhookId}/deliveries`, { limit, starting_after: after }),
    [webhookId]
  )
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [note, setNote] = useState("")
  const action = useAction()
  usePolling(deliveries.data?.data.some((d) => d.status === "pending") ?? false, 2000, () => deliveries.reload())
  const base = `/v1/webhooks/${webhookId}`
  return (
    <section>
      <p class="crumbs">
        <a href="#/webhooks">Webhooks</a> / {webhookId}
      </p>
      <Loaded resource={subscription} what="the subscription">
        {(s) => (
          <>
            <h1>{s.url}</h1>
            <p>
              <Status value={s.is_active ? (s.degraded ? "degraded" : "active") : "inactive"} /> · events:{" "}
              {s.events.map((e) => (
                <code key={e}>{e} </code>
              ))}
            </p>
            {secret === undefined ? null : <CopySecret label="Signing secret, shown this once" secret={secret} onDone={() => setSecret(undefined)} />}
            <div class="actions card">
              <button
                type="button"
                onClick={() =>
                  action.run(async () => {
                    await client.call("POST", `${base}/test`)
                    setNote("Test event scheduled.")
                    deliveries.reload()
                  })
                }
              >
                Send a test event
              </button>
              <button
                type="button"
                onClick={() =>
                  action.run(async () => {
                    await client.call("PATCH", base, { body: { is_active: !s.is_active } })
                    setNote(s.is_active ? "Deactivated." : "Reactivated.")
                    subscription.reload()
                  })
                }
              >
                {s.is_active ? "Deactivate" : "Reactivate"}
              </button>
              <ConfirmButton
                label="Rotate secret"
                confirm="Receivers must switch to the new secret."
                onConfirm={() =>
                  action.run(async () => setSecret((await client.call<{ secret: string }>("POST", `${base}/rotate_secret`)).secret))
                }
              />
              <ConfirmButton
                label="Delete subscription"
                confirm="No more deliveries will be sent."
                onConfirm={() =>
                  action.run(async () => {
                    await client.call("DELETE", base)
                    location.hash = "#/webhooks"
                  })
                }
              />
              <span role="status">{note}</span>
              {action.error === undefined ? null : <ErrorBox error={action.error} />}
            </div>
            <EditSubscription client={client} subscription={s} onSaved={subscription.reload} key={s.id} />
          </>
        )}
      </Loaded>
      <h2>Deliveries</h2>
      <Loaded resource={deliveries} what="deliveries">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No deliveries yet. Send a test event.</Empty>
          ) : (
            <ul class="deliveries">
              {page.data.map((d) => (
                <DeliveryRow key={d.id} client={client} webhookId={webhookId} delivery={d} onChanged={deliveries.reload} />
              ))}
            </ul>
          )
        }
      </Loaded>
      <LoadMore list={deliveries} what="deliveries" />
    </section>
  )
}

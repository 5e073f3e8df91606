/**
 * This month's usage against the plan's caps, and per day the tickets and
 * conversations the lists show (counted here, from the same public API).
 */
import type { Usage } from "../../../../schema/Usage.js"
import type { Client } from "../api.js"
import { BarChart } from "../chart.js"
import { Loaded, useResource } from "../ui.js"

const dayOf = (iso: string) => iso.slice(0, 10)

/** Counts per day of the period, reading at most `pages` pages of a list, newest first. */
const perDay = async (
  client: Client,
  path: string,
  field: string,
  period: { start: string; end: string },
  pages = 5
): Promise<Map<string, number>> => {
  const counts = new Map<string, number>()
  let cursor: string | undefined
  for (let i = 0; i < pages; i++) {
    const page = await client.list<Record<string, string>>(path, { limit: "100", starting_after: cursor })
    let older = false
    for (const item of page.data) {
      const at = item[field]
      if (at === undefined) continue
      if (at < period.start) older = true
      else if (at < period.end) counts.set(dayOf(at), (counts.get(dayOf(at)) ?? 0) + 1)
    }
    if (older || !page.hasMore || page.nextCursor === null) break
    cursor = page.nextCursor
  }
  return counts
}

const daysOf = (period: { start: string; end: string }): Array<string> => {
  const days: Array<string> = []
  for (let t = Date.parse(period.start); t < Date.parse(period.end); t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10))
  return days
}

const Meter = ({ label, used, cap }: { label: string; used: number; cap: number | null }) => (
  <div class="meter card">
    <h3>{label}</h3>
    <p class="big">
      {used}
      <span class="muted"> / {cap === null ? "unlimited" : cap}</span>
    </p>
    {cap === null ? null : (
      <progress max={cap} value={Math.min(used, cap)} aria-label={`${label}: ${used} of ${cap}`} class={used >= cap ? "full" : ""} />
    )}
  </div>
)

export const OverviewPage = ({ client }: { client: Client }) => {
  const usage = useResource<Usage>(() => client.call("GET", "/v1/usage"), [client])
  const daily = useResource(async () => {
    const u = usage.data
    if (u === undefined) return undefined
    const [tickets, conversations] = await Promise.all([
      perDay(client, "/v1/tickets", "created_at", u.period),
      perDay(client, "/v1/conversations", "started_at", u.period)
    ])
    return { days: daysOf(u.period), tickets, conversations }
  }, [usage.data])
  return (
    <section>
      <h1>Overview</h1>
      <Loaded resource={usage} what="usage">
        {(u) => (
          <>
            <p>
              Plan <strong>{u.plan}</strong> · {u.livemode ? "live" : "sandbox"} · {u.period.start.slice(0, 10)} to{" "}
              {new Date(Date.parse(u.period.end) - 1).toISOString().slice(0, 10)} (UTC)
            </p>
            <div class="meters">
              <Meter label="Tickets this month" used={u.tickets.used} cap={u.tickets.cap} />
              <Meter label="Replies this month" used={u.replies.used} cap={u.replies.cap} />
              <div class="meter card">
                <h3>Credits consumed</h3>
                <p class="big">{u.credits.consumed}</p>
              </div>
            </div>
          </>
        )}
      </Loaded>
      {usage.data === undefined ? null : (
        <Loaded resource={daily} what="daily activity">
          {(d) =>
            d === undefined ? null : (
              <div class="charts">
                <BarChart title="Tickets per day" days={d.days} counts={d.tickets} />
                <BarChart title="Conversations per day" days={d.days} counts={d.conversations} />
              </div>
            )
          }
        </Loaded>
      )}
    </section>
  )
}

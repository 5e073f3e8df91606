/**
 * An agent's insights over the last 7, 30 or 90 days (UTC, ending with the service's today): the totals, the
 * figures per day, the questions it could not answer (grouped, each with an "Answer this" form that writes a
 * Q&A item the agent uses at once) and the replies rated down with their comments.
 */
import type { InsightDay, InsightFigures, Insights, UnansweredGroup } from "../../../../schema/Insights.js"
import { useMemo, useState } from "preact/hooks"
import { type Client, query } from "../api.js"
import { BarChart } from "../chart.js"
import { Empty, ErrorBox, Field, Loaded, Select, useAction, useResource, when } from "../ui.js"
import { AgentHeader } from "./Agents.js"

const periods: ReadonlyArray<readonly [string, string]> = [
  ["7", "Last 7 days"],
  ["30", "Last 30 days"],
  ["90", "Last 90 days"]
]

/** The day `days - 1` before `to` (both `YYYY-MM-DD`, UTC). */
const firstDay = (to: string, days: number) => new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10)

const perDay = (days: ReadonlyArray<InsightDay>, figure: (day: InsightFigures) => number) =>
  new Map(days.map((d) => [d.date, figure(d)] as const))

const Total = ({ label, value }: { label: string; value: number }) => (
  <div class="meter card">
    <h3>{label}</h3>
    <p class="big">{value}</p>
  </div>
)

const AnswerThis = ({ client, agentId, group }: { client: Client; agentId: string; group: UnansweredGroup }) => {
  const [open, setOpen] = useState(false)
  const [question, setQuestion] = useState(group.question)
  const [answer, setAnswer] = useState("")
  const [saved, setSaved] = useState(false)
  const action = useAction()
  if (!open) {
    return (
      <>
        <button type="button" onClick={() => (setOpen(true), setSaved(false))} aria-label={`Answer this: ${group.question}`}>
          Answer this
        </button>
        <span role="status" class="saved">
          {saved ? "Saved as a Q&A: the agent answers it from now on." : ""}
        </span>
      </>
    )
  }
  return (
    <form
      aria-label={`Answer: ${group.question}`}
      onSubmit={async (e) => {
        e.preventDefault()
        const body = { question, answer }
        if (await action.run(() => client.call("POST", `/v1/agents/${agentId}/qa`, { body }))) {
          setAnswer("")
          setSaved(true)
          setOpen(false)
        }
      }}
    >
      <Field label="Question" value={question} onInput={setQuestion} required name="question" />
      <Field label="Answer" value={answer} onInput={setAnswer} multiline={4} required name="answer" />
      <button type="submit" class="primary" disabled={action.pending}>
        Save answer
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </form>
  )
}

const Unanswered = ({ client, agentId, insights }: { client: Client; agentId: string; insights: Insights }) => (
  <section aria-labelledby="unanswered-title">
    <h2 id="unanswered-title">Unanswered questions</h2>
    {insights.unanswered_sampled ? <p class="muted small">Grouped from the latest unanswered questions of the period only.</p> : null}
    {insights.unanswered.length === 0 ? (
      <Empty>Every question of the period was answered.</Empty>
    ) : (
      <ul class="unanswered" aria-label="Unanswered question groups">
        {insights.unanswered.map((group) => (
          <li class="card" key={`${group.question}:${group.last_asked_at}`}>
            <p>
              <strong>{group.question}</strong>{" "}
              <span class="muted small">
                (asked {group.count} {group.count === 1 ? "time" : "times"}, last {when(group.last_asked_at)})
              </span>
            </p>
            <p class="small">
              Conversations:{" "}
              {group.conversation_ids.map((id, i) => (
                <span key={id}>
                  {i === 0 ? "" : ", "}
                  <a href={`#/conversations/${id}`}>
                    {id}
                  </a>
                </span>
              ))}
            </p>
            <AnswerThis client={client} agentId={agentId} group={group} />
          </li>
        ))}
      </ul>
    )}
  </section>
)

const RatedDownList = ({ insights }: { insights: Insights }) => (
  <section aria-labelledby="rated-down-title">
    <h2 id="rated-down-title">Replies rated down</h2>
    {insights.rated_down.length === 0 ? (
      <Empty>No reply of the period was rated down.</Empty>
    ) : (
      <table>
        <caption class="sr-only">Replies rated down</caption>
        <thead>
          <tr>
            <th scope="col">Question</th>
            <th scope="col">Reply</th>
            <th scope="col">Outcome</th>
            <th scope="col">Comment</th>
            <th scope="col">Rated</th>
          </tr>
        </thead>
        <tbody>
          {insights.rated_down.map((r) => (
            <tr key={r.message_id}>
              <td>
                <a href={`#/conversations/${r.conversation_id}`}>{r.question ?? "(no question)"}</a>
              </td>
              <td>{r.reply}</td>
              <td>{r.outcome.replace(/_/g, " ")}</td>
              <td>{r.comment ?? "—"}</td>
              <td>{when(r.rated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
)

const figures: ReadonlyArray<readonly [string, (d: InsightFigures) => number]> = [
  ["Conversations per day", (d) => d.conversations],
  ["Answered replies per day", (d) => d.replies.answered],
  ["Fallback replies per day", (d) => d.replies.fallback],
  ["Handed-off replies per day", (d) => d.replies.handed_off],
  ["Replies rated up per day", (d) => d.ratings.up],
  ["Replies rated down per day", (d) => d.ratings.down]
]

/** One chart per figure; its data kept while the insights are the same, so uPlot draws once. */
const Charts = ({ insights, period }: { insights: Insights; period: string }) => {
  const series = useMemo(
    () => ({
      days: insights.days.map((d) => d.date),
      counts: figures.map(([title, figure]) => [title, perDay(insights.days, figure)] as const)
    }),
    [insights]
  )
  return (
    <div class="charts">
      {series.counts.map(([title, counts]) => (
        <BarChart key={title} title={title} days={series.days} counts={counts} period={period} />
      ))}
    </div>
  )
}

export const InsightsPage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const [days, setDays] = useState("30")
  // the service's today, once known: the periods end there, not on this browser's date
  const [to, setTo] = useState<string | undefined>(undefined)
  const insights = useResource<Insights>(async () => {
    const load = (params: Record<string, string>): Promise<Insights> =>
      client.call("GET", `/v1/agents/${agentId}/insights${query(params)}`)
    if (to !== undefined) return load({ from: firstDay(to, Number(days)), to })
    // without the service's today yet, its default period (the last 30 days) tells it
    const first = await load({})
    setTo(first.to)
    return days === "30" ? first : load({ from: firstDay(first.to, Number(days)), to: first.to })
  }, [agentId, days])
  const label = `in the ${periods.find(([value]) => value === days)?.[1].toLowerCase() ?? "period"}`
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="insights" />
      <Select label="Period" value={days} options={periods} onChange={setDays} />
      <Loaded resource={insights} what="insights">
        {(i) => (
          <>
            <p>
              From {i.from} to {i.to} (UTC)
            </p>
            <div class="meters" role="group" aria-label="Totals">
              <Total label="Conversations" value={i.totals.conversations} />
              <Total label="Answered" value={i.totals.replies.answered} />
              <Total label="Fallback" value={i.totals.replies.fallback} />
              <Total label="Handed off" value={i.totals.replies.handed_off} />
              <Total label="Rated up" value={i.totals.ratings.up} />
              <Total label="Rated down" value={i.totals.ratings.down} />
            </div>
            <Charts insights={i} period={label} />
            <Unanswered client={client} agentId={agentId} insights={i} />
            <RatedDownList insights={i} />
          </>
        )}
      </Loaded>
    </section>
  )
}

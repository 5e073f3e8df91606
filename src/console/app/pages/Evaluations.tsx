/**
 * An agent's evaluations: the list with each one's latest run, a new one written as lines of cases; an
 * evaluation's runs with their scores over time, what started each, "Run again" and "Run when knowledge changes"
 * (`run_on_knowledge_change`, saved at once); a run's cases with the agent's replies. Runs not yet ended are
 * reloaded every 2 s.
 */
import type { CaseResult, Evaluation, EvaluationCase, EvaluationRun, Expectation } from "../../../../schema/Evaluations.js"
import { useMemo, useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ScoreChart } from "../chart.js"
import { Empty, ErrorBox, Field, Loaded, Status, useAction, usePolling, useResource, when } from "../ui.js"
import { AgentHeader } from "./Agents.js"

const pollMillis = 2_000
const ended = (run: EvaluationRun) => run.status === "completed" || run.status === "failed"
const declines = "(declines)"

const expected = (expect: Expectation) =>
  "contains" in expect ? `contains “${expect.contains}”` : "declines" in expect ? "declines" : `draws on ${expect.source_id}`

const triggerLabel = (run: EvaluationRun) => (run.trigger === "knowledge_change" ? "Knowledge changed" : "Manual")

const score = (run: EvaluationRun | null) => (run === null || run.score === null ? "—" : `${Math.round(run.score * 100)}%`)

/**
 * The cases of the form's text, one a line: `question => expected text` or `question => (declines)`. Only the
 * shape is checked here (the schema's module would bring Effect into the page); lengths and counts are the API's.
 */
export const parseCases = (text: string): { cases: Array<EvaluationCase> } | { error: string } => {
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  if (lines.length === 0) return { error: "Write at least one case." }
  const cases: Array<EvaluationCase> = []
  for (const [i, line] of lines.entries()) {
    const at = line.indexOf("=>")
    const question = at < 0 ? "" : line.slice(0, at).trim()
    const answer = at < 0 ? "" : line.slice(at + 2).trim()
    if (question === "" || answer === "") return { error: `Line ${i + 1}: write it as “question => expected text” or “question => ${declines}”.` }
    cases.push({ question, expect: answer.toLowerCase() === declines ? { declines: true } : { contains: answer } })
  }
  return { cases }
}

const NewEvaluation = ({ client, agentId, onCreated }: { client: Client; agentId: string; onCreated: (e: Evaluation) => void }) => {
  const [name, setName] = useState("")
  const [text, setText] = useState("")
  const [watch, setWatch] = useState(false)
  const action = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    let created: Evaluation | undefined
    const ok = await action.run(async () => {
      const parsed = parseCases(text)
      if ("error" in parsed) throw new Error(parsed.error)
      created = await client.call<Evaluation>("POST", `/v1/agents/${agentId}/evaluations`, {
        body: { name, cases: parsed.cases, run_on_knowledge_change: watch }
      })
    })
    if (ok && created !== undefined) {
      setName("")
      setText("")
      setWatch(false)
      onCreated(created)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-evaluation">
      <h2 id="new-evaluation">New evaluation</h2>
      <Field label="Name" value={name} onInput={setName} required name="evaluation-name" />
      <Field
        label="Cases"
        value={text}
        onInput={setText}
        multiline={5}
        required
        name="evaluation-cases"
        hint={`One a line: question => expected text, or question => ${declines}. Its first run starts at once.`}
      />
      <label class="check">
        <input
          type="checkbox"
          name="evaluation-watch"
          checked={watch}
          onChange={(e) => setWatch((e.currentTarget as HTMLInputElement).checked)}
        />
        Run when knowledge changes
      </label>
      <button type="submit" class="primary" disabled={action.pending}>
        Create and run
      </button>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </form>
  )
}

export const EvaluationsPage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const evaluations = useResource(() => client.list<Evaluation>(`/v1/agents/${agentId}/evaluations`, { limit: "100" }), [agentId])
  const running = evaluations.data?.data.some((e) => e.latest_run !== null && !ended(e.latest_run)) ?? false
  usePolling(running, pollMillis, evaluations.reload)
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="evaluations" />
      <NewEvaluation client={client} agentId={agentId} onCreated={(e) => (location.hash = `#/agents/${agentId}/evaluations/${e.id}`)} />
      <Loaded resource={evaluations} what="evaluations">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No evaluations yet: write the first one above.</Empty>
          ) : (
            <table>
              <caption>Evaluations of this agent</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Cases</th>
                  <th scope="col">Latest run</th>
                  <th scope="col">Score</th>
                  <th scope="col">On knowledge changes</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <a href={`#/agents/${agentId}/evaluations/${e.id}`}>{e.name}</a>
                    </td>
                    <td>{e.cases.length}</td>
                    <td>{e.latest_run === null ? "—" : <Status value={e.latest_run.status} />}</td>
                    <td>{score(e.latest_run)}</td>
                    <td>{e.run_on_knowledge_change ? "Runs" : "—"}</td>
                    <td>{when(e.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  )
}

const Crumbs = ({ agentId, evaluation }: { agentId: string; evaluation: Evaluation | undefined }) => (
  <p class="crumbs">
    <a href={`#/agents/${agentId}/evaluations`}>All evaluations</a>
    {evaluation === undefined ? null : (
      <>
        {" / "}
        <a href={`#/agents/${agentId}/evaluations/${evaluation.id}`}>{evaluation.name}</a>
      </>
    )}
  </p>
)

/** "Run when knowledge changes", saved as it is ticked; and when an automatic run was last skipped at the cap. */
const WatchToggle = ({
  client,
  base,
  evaluation,
  onSaved
}: {
  client: Client
  base: string
  evaluation: Evaluation
  onSaved: () => void
}) => {
  const save = useAction()
  const [saved, setSaved] = useState("")
  // shown ticked at once, and back as it was when the change is refused
  const [on, setOn] = useState(evaluation.run_on_knowledge_change)
  const toggle = async (checked: boolean) => {
    setOn(checked)
    if (await save.run(() => client.call<Evaluation>("PATCH", base, { body: { run_on_knowledge_change: checked } }))) {
      setSaved(checked ? "It runs a minute after the agent's knowledge changes." : "It runs only when asked.")
      onSaved()
    } else setOn(!checked)
  }
  return (
    <div>
      <label class="check">
        <input
          type="checkbox"
          name="evaluation-watch"
          checked={on}
          onChange={(e) => void toggle((e.currentTarget as HTMLInputElement).checked)}
        />
        Run when knowledge changes
      </label>{" "}
      <span role="status">{saved}</span>
      {evaluation.auto_run_skipped_at === null ? null : (
        <p class="muted">
          An automatic run was skipped {when(evaluation.auto_run_skipped_at)}: this month's runs are used up.
        </p>
      )}
      {save.error === undefined ? null : <ErrorBox error={save.error} />}
    </div>
  )
}

export const EvaluationPage = ({ client, agentId, evaluationId }: { client: Client; agentId: string; evaluationId: string }) => {
  const base = `/v1/agents/${agentId}/evaluations/${evaluationId}`
  const evaluation = useResource<Evaluation>(() => client.call("GET", base), [base])
  const runs = useResource(() => client.list<EvaluationRun>(`${base}/runs`, { limit: "100" }), [base])
  const [started, setStarted] = useState<EvaluationRun | undefined>(undefined)
  const action = useAction()
  usePolling(runs.data?.data.some((r) => !ended(r)) ?? false, pollMillis, runs.reload)
  const points = useMemo(
    () =>
      (runs.data?.data ?? [])
        .filter((r) => r.status === "completed" && r.score !== null)
        .map((r) => ({ at: r.finished_at ?? r.created_at, score: r.score! }))
        .reverse(),
    [runs.data]
  )
  const runAgain = async () => {
    let run: EvaluationRun | undefined
    if (await action.run(async () => (run = await client.call<EvaluationRun>("POST", `${base}/runs`)))) {
      setStarted(run)
      runs.reload()
    }
  }
  const name = evaluation.data?.name ?? evaluationId
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="evaluations" />
      <Crumbs agentId={agentId} evaluation={undefined} />
      <h2>Evaluation: {evaluation.data?.name ?? "…"}</h2>
      {evaluation.error === undefined ? null : <ErrorBox error={evaluation.error} retry={evaluation.reload} />}
      <p>
        <button type="button" class="primary" onClick={runAgain} disabled={action.pending} aria-label={`Run again: ${name}`}>
          Run again
        </button>{" "}
        <span role="status">{started === undefined ? "" : `Run ${started.id} ${started.status === "queued" ? "queued" : "started"}.`}</span>
      </p>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
      {evaluation.data === undefined ? null : (
        <WatchToggle client={client} base={base} evaluation={evaluation.data} onSaved={evaluation.reload} />
      )}
      <Loaded resource={runs} what="runs">
        {(page) => (
          <>
            {points.length === 0 ? null : <ScoreChart title="Score of each completed run" points={points} />}
            <table>
              <caption>Runs, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Status</th>
                  <th scope="col">Started by</th>
                  <th scope="col">Passed</th>
                  <th scope="col">Score</th>
                  <th scope="col">Asked</th>
                  <th scope="col">Finished</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <a href={`#/agents/${agentId}/evaluations/${evaluationId}/runs/${r.id}`}>{r.id}</a>
                    </td>
                    <td>
                      <Status value={r.status} />
                    </td>
                    <td>{triggerLabel(r)}</td>
                    <td>
                      {r.passed}/{r.total}
                    </td>
                    <td>{score(r)}</td>
                    <td>{when(r.created_at)}</td>
                    <td>{when(r.finished_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Loaded>
    </section>
  )
}

const Sources = ({ result }: { result: CaseResult }) =>
  result.sources.length === 0 ? (
    <>—</>
  ) : (
    <ul class="sources">
      {result.sources.map((s, i) => (
        <li key={`${s.type}:${s.id}:${i}`}>{s.url === null ? s.title : <a href={s.url}>{s.title}</a>}</li>
      ))}
    </ul>
  )

export const RunPage = ({ client, agentId, evaluationId, runId }: { client: Client; agentId: string; evaluationId: string; runId: string }) => {
  const base = `/v1/agents/${agentId}/evaluations/${evaluationId}`
  const evaluation = useResource<Evaluation>(() => client.call("GET", base), [base])
  const run = useResource<EvaluationRun>(() => client.call("GET", `${base}/runs/${runId}`), [base, runId])
  usePolling(run.data !== undefined && !ended(run.data), pollMillis, run.reload)
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="evaluations" />
      <Crumbs agentId={agentId} evaluation={evaluation.data} />
      <h2>Run {runId}</h2>
      <Loaded resource={run} what="the run">
        {(r) => (
          <>
            <p>
              <Status value={r.status} /> {triggerLabel(r)} · {r.passed}/{r.total} passed, score {score(r)}; asked {when(r.created_at)}, finished {when(r.finished_at)}
            </p>
            {r.error === null ? null : <ErrorBox error={new Error(r.error.message)} />}
            <table>
              <caption>Cases of the run</caption>
              <thead>
                <tr>
                  <th scope="col">Question</th>
                  <th scope="col">Expected</th>
                  <th scope="col">Passed</th>
                  <th scope="col">Reply</th>
                  <th scope="col">Sources</th>
                </tr>
              </thead>
              <tbody>
                {r.results.map((c, i) => (
                  <tr key={i}>
                    <td>{c.question}</td>
                    <td>{expected(c.expect)}</td>
                    <td>{c.passed ? "Passed" : "Not passed"}</td>
                    <td>
                      {c.reply} <span class="muted small">({c.outcome})</span>
                    </td>
                    <td>
                      <Sources result={c} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Loaded>
    </section>
  )
}

/**
 * "Test retrieval" on an agent's knowledge page: a question run through the
 * retrieval replies use (`POST …/knowledge/search`), its hits best first with
 * their scores, each marked relevant or not against the replies' threshold.
 */
import type { KnowledgeHit, KnowledgeSearch } from "../../../../schema/Knowledge.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ErrorBox, Field, useAction } from "../ui.js"

/** Long passages are cut: the list compares hits, it does not read them. */
const excerptChars = 280

const excerpt = (text: string) => (text.length <= excerptChars ? text : `${text.slice(0, excerptChars).trimEnd()}…`)

const Hit = ({ hit }: { hit: KnowledgeHit }) => (
  <li class={`hit ${hit.relevant ? "hit-relevant" : "hit-irrelevant"}`} data-hit-id={hit.id}>
    <div class="source-head">
      <strong>{hit.kind === "qa" ? hit.question : (hit.source_title ?? "Passage")}</strong>
      <span class={`badge ${hit.relevant ? "badge-relevant" : "badge-not-relevant"}`}>
        {hit.relevant ? "relevant" : "not relevant"}
      </span>
      <span class="muted">
        {hit.kind === "qa" ? "Q&A" : "passage"} · score {hit.score.toFixed(2)}
        {hit.kind === "qa" && hit.source_title !== null ? ` · from ${hit.source_title}` : ""}
      </span>
    </div>
    <p class="excerpt">{excerpt(hit.text)}</p>
  </li>
)

const Hits = ({ result }: { result: KnowledgeSearch }) => {
  const relevant = result.hits.filter((hit) => hit.relevant).length
  return (
    <>
      <p role="status" class={relevant === 0 ? "escalation" : "muted"}>
        {relevant === 0
          ? `No hit reaches the threshold (${result.threshold}): a reply to this question falls back and offers a person.`
          : `${relevant} of ${result.hits.length} hits reach the threshold (${result.threshold}): a reply draws on them.`}
      </p>
      {result.hits.length === 0 ? null : (
        <ol class="hits" aria-label={`Hits for ${result.query}`}>
          {result.hits.map((hit) => (
            <Hit key={hit.id} hit={hit} />
          ))}
        </ol>
      )}
    </>
  )
}

export const TestRetrieval = ({ client, agentId }: { client: Client; agentId: string }) => {
  const [query, setQuery] = useState("")
  const [result, setResult] = useState<KnowledgeSearch | undefined>(undefined)
  const action = useAction()

  const submit = async (e: Event) => {
    e.preventDefault()
    await action.run(async () =>
      setResult(await client.call<KnowledgeSearch>("POST", `/v1/agents/${agentId}/knowledge/search`, { body: { query } }))
    )
  }

  return (
    <section class="card" aria-labelledby="test-retrieval">
      <h2 id="test-retrieval">Test retrieval</h2>
      <p class="muted small">
        What this agent finds for a question, best first, as a reply would. Free: no credit, no message, no event.
      </p>
      <form onSubmit={submit}>
        <Field label="Question" value={query} onInput={setQuery} required name="retrieval-query" />
        <button type="submit" disabled={action.pending}>
          {action.pending ? "Searching…" : "Search knowledge"}
        </button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
      {result === undefined ? null : <Hits result={result} />}
    </section>
  )
}

/** An agent's Q&A and categories: list by category, add, edit, delete; regenerate from the sources. */
import type { Category, Qa } from "../../../../schema/Qa.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, LoadMore, Select, useAction, usePagedList, useResource } from "../ui.js"
import { AgentHeader } from "./Agents.js"

const QaEditor = ({
  client,
  agentId,
  qa,
  categories,
  onChanged
}: {
  client: Client
  agentId: string
  qa: Qa
  categories: ReadonlyArray<Category>
  onChanged: () => void
}) => {
  const [editing, setEditing] = useState(false)
  const [question, setQuestion] = useState(qa.question)
  const [answer, setAnswer] = useState(qa.answer)
  const [category, setCategory] = useState(qa.category_id ?? "")
  const action = useAction()
  const path = `/v1/agents/${agentId}/qa/${qa.id}`
  if (!editing) {
    return (
      <li class="qa card">
        <p>
          <strong>{qa.question}</strong> <span class="muted small">({qa.origin})</span>
        </p>
        <p class="body">{qa.answer}</p>
        <button type="button" onClick={() => setEditing(true)} aria-label={`Edit: ${qa.question}`}>
          Edit
        </button>
        <ConfirmButton
          label="Delete"
          what={qa.question}
          confirm="Delete this Q&A?"
          onConfirm={async () => {
            if (await action.run(() => client.call("DELETE", path))) onChanged()
          }}
        />
        {action.error === undefined ? null : <ErrorBox error={action.error} />}
      </li>
    )
  }
  return (
    <li class="qa card">
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          const body = { question, answer, category_id: category === "" ? null : category }
          if (await action.run(() => client.call("PATCH", path, { body }))) {
            setEditing(false)
            onChanged()
          }
        }}
      >
        <Field label="Question" value={question} onInput={setQuestion} required />
        <Field label="Answer" value={answer} onInput={setAnswer} multiline={4} required />
        <Select label="Category" value={category} onChange={setCategory} options={[["", "None"], ...categories.map((c) => [c.id, c.name] as const)]} />
        <button type="submit" class="primary" disabled={action.pending}>
          Save Q&A
        </button>
        <button type="button" onClick={() => setEditing(false)}>
          Cancel
        </button>
        {action.error === undefined ? null : <ErrorBox error={action.error} />}
      </form>
    </li>
  )
}

const Categories = ({ client, agentId, categories, onChanged }: { client: Client; agentId: string; categories: ReadonlyArray<Category>; onChanged: () => void }) => {
  const [name, setName] = useState("")
  const action = useAction()
  return (
    <div class="card">
      <h2>Categories</h2>
      {categories.length === 0 ? <Empty>No categories yet.</Empty> : null}
      <ol class="categories">
        {categories.map((c) => (
          <li key={c.id}>
            {c.name}{" "}
            <ConfirmButton
              label="Delete"
              what={c.name}
              confirm={`Delete category ${c.name}? Its Q&A become uncategorised.`}
              onConfirm={async () => {
                if (await action.run(() => client.call("DELETE", `/v1/agents/${agentId}/categories/${c.id}`))) onChanged()
              }}
            />
          </li>
        ))}
      </ol>
      <form
        class="inline-form"
        onSubmit={async (e) => {
          e.preventDefault()
          if (await action.run(() => client.call("POST", `/v1/agents/${agentId}/categories`, { body: { name } }))) {
            setName("")
            onChanged()
          }
        }}
      >
        <Field label="New category" value={name} onInput={setName} required name="category-name" />
        <button type="submit">Add category</button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </div>
  )
}

export const QaPage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const [filter, setFilter] = useState("")
  const categories = useResource(() => client.list<Category>(`/v1/agents/${agentId}/categories`, { limit: "100" }), [agentId])
  const items = usePagedList(
    (limit, after) => client.list<Qa>(`/v1/agents/${agentId}/qa`, { limit, starting_after: after, category_id: filter }),
    [agentId, filter]
  )
  const [question, setQuestion] = useState("")
  const [answer, setAnswer] = useState("")
  const [category, setCategory] = useState("")
  const [note, setNote] = useState("")
  const action = useAction()
  const all = categories.data?.data ?? []
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="qa" />
      <Loaded resource={categories} what="categories">
        {(page) => <Categories client={client} agentId={agentId} categories={page.data} onChanged={() => (categories.reload(), items.reload())} />}
      </Loaded>
      <form
        class="card"
        aria-labelledby="new-qa"
        onSubmit={async (e) => {
          e.preventDefault()
          const body = { question, answer, ...(category === "" ? {} : { category_id: category }) }
          if (await action.run(() => client.call("POST", `/v1/agents/${agentId}/qa`, { body }))) {
            setQuestion("")
            setAnswer("")
            items.reload()
          }
        }}
      >
        <h2 id="new-qa">New Q&A</h2>
        <Field label="Question" value={question} onInput={setQuestion} required name="question" />
        <Field label="Answer" value={answer} onInput={setAnswer} multiline={3} required name="answer" />
        <Select label="Category" value={category} onChange={setCategory} options={[["", "None"], ...all.map((c) => [c.id, c.name] as const)]} />
        <button type="submit" class="primary" disabled={action.pending}>
          Add Q&A
        </button>
        {action.error === undefined ? null : <ErrorBox error={action.error} />}
      </form>
      <div class="inline-form">
        <Select
          label="Show"
          value={filter}
          onChange={setFilter}
          options={[["", "All Q&A"], ["none", "Uncategorised"], ...all.map((c) => [c.id, c.name] as const)]}
        />
        <button
          type="button"
          onClick={() =>
            action.run(async () => {
              await client.call("POST", `/v1/agents/${agentId}/qa/regenerate`)
              setNote("Regeneration started; generated Q&A are rebuilt from the sources in the background.")
            })
          }
        >
          Regenerate from sources
        </button>
        <span role="status">{note}</span>
      </div>
      <Loaded resource={items} what="Q&A">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No Q&A here.</Empty>
          ) : (
            <ul class="qa-list">
              {page.data.map((qa) => (
                <QaEditor key={`${qa.id}:${qa.updated_at}`} client={client} agentId={agentId} qa={qa} categories={all} onChanged={items.reload} />
              ))}
            </ul>
          )
        }
      </Loaded>
      <LoadMore list={items} what="Q&A pairs" />
    </section>
  )
}

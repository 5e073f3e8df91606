/** An agent's glossary: terms with definition and synonyms, enabled or not; add, toggle, delete. */
import type { Glossary } from "../../../../schema/Glossary.js"
import { useEffect, useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, useAction, useResource } from "../ui.js"
import { AgentHeader } from "./Agents.js"

/** A checkbox that shows the change at once, while it is saved (the reload then confirms or restores it). */
const Toggle = ({ label, checked, onChange }: { label: string; checked: boolean; onChange: (value: boolean) => void }) => {
  const [value, setValue] = useState(checked)
  useEffect(() => setValue(checked), [checked])
  return (
    <input
      type="checkbox"
      checked={value}
      aria-label={label}
      onChange={(e) => {
        const next = (e.currentTarget as HTMLInputElement).checked
        setValue(next)
        onChange(next)
      }}
    />
  )
}

export const GlossaryPage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const glossary = useResource<Glossary>(() => client.call("GET", `/v1/agents/${agentId}/glossary`), [agentId])
  const [term, setTerm] = useState("")
  const [definition, setDefinition] = useState("")
  const [synonyms, setSynonyms] = useState("")
  const action = useAction()
  const base = `/v1/agents/${agentId}/glossary/terms`
  const submit = async (e: Event) => {
    e.preventDefault()
    const body = {
      term,
      ...(definition.trim() === "" ? {} : { definition }),
      synonyms: synonyms.split(",").map((s) => s.trim()).filter((s) => s !== "")
    }
    if (await action.run(() => client.call("POST", base, { body }))) {
      setTerm("")
      setDefinition("")
      setSynonyms("")
      glossary.reload()
    }
  }
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="glossary" />
      <form class="card" onSubmit={submit} aria-labelledby="new-term">
        <h2 id="new-term">New term</h2>
        <Field label="Term" value={term} onInput={setTerm} required name="term" />
        <Field label="Definition" value={definition} onInput={setDefinition} multiline={2} name="definition" />
        <Field label="Synonyms" value={synonyms} onInput={setSynonyms} hint="Separated by commas." name="synonyms" />
        <button type="submit" class="primary" disabled={action.pending}>
          Add term
        </button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
      <Loaded resource={glossary} what="the glossary">
        {(g) =>
          g.terms.length === 0 ? (
            <Empty>No terms yet.</Empty>
          ) : (
            <table>
              <caption>Terms</caption>
              <thead>
                <tr>
                  <th scope="col">Term</th>
                  <th scope="col">Definition</th>
                  <th scope="col">Synonyms</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Delete</th>
                </tr>
              </thead>
              <tbody>
                {g.terms.map((t) => (
                  <tr key={t.term}>
                    <td>{t.term}</td>
                    <td>{t.definition ?? "—"}</td>
                    <td>{t.synonyms.join(", ") || "—"}</td>
                    <td>
                      <Toggle
                        label={`${t.term} enabled`}
                        checked={t.enabled}
                        onChange={(enabled) =>
                          action
                            .run(() => client.call("PATCH", `${base}/${encodeURIComponent(t.term)}`, { body: { enabled } }))
                            .then(glossary.reload)
                        }
                      />
                    </td>
                    <td>
                      <ConfirmButton
                        label="Delete"
                        what={t.term}
                        confirm={`Delete ${t.term}?`}
                        onConfirm={async () => {
                          if (await action.run(() => client.call("DELETE", `${base}/${encodeURIComponent(t.term)}`))) glossary.reload()
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
    </section>
  )
}

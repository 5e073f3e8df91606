/**
 * Forms: the list, a new form from a starting template, and the editor: the
 * form's definition as JSON (what `PATCH /v1/forms/{id}` takes), saved with the
 * service's field errors shown, beside a live `<service-form>` preview drawn
 * with a public forms key.
 */
import type { Agent } from "../../../../schema/Agents.js"
import type { Form } from "../../../../schema/Forms.js"
import { useState } from "preact/hooks"
import { ApiFailure, type Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, Select, useAction, useResource, when } from "../ui.js"

const template = (agentId: string) => ({
  title: { en: "Contact us", es: "Contáctanos" },
  fields: [
    { id: "name", type: "text", label: { en: "Name", es: "Nombre" }, required: true },
    { id: "email", type: "email", label: { en: "E-mail", es: "Correo" }, required: true },
    { id: "body", type: "textarea", label: { en: "Message", es: "Mensaje" }, required: true }
  ],
  submit_label: { en: "Send", es: "Enviar" },
  target: { type: "ticket", agent_id: agentId }
})

/** Nulls left out: a read shows an unset value as null where the update takes its absence. */
const withoutNulls = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutNulls)
    : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]))
      : value

/** The editable part of a form: what the update takes. */
const editable = (form: Form) => withoutNulls({
  title: form.title,
  fields: form.fields,
  submit_label: form.submit_label,
  success_message: form.success_message,
  branding: form.branding,
  width: form.width,
  appearance: form.appearance,
  target: form.target,
  settings: form.settings
})

const titleOf = (form: Form) => {
  const title = form.title as Record<string, string>
  return title["en"] ?? Object.values(title)[0] ?? form.id
}

/** A 400's field errors, listed under the message. */
const FieldErrors = ({ error }: { error: unknown }) => {
  const details = error instanceof ApiFailure ? error.fieldErrors : undefined
  if (details === undefined || details.length === 0) return null
  return (
    <ul class="source-error">
      {details.map((d, i) => (
        <li key={i}>
          <code>{d.field}</code>: {d.message}
        </li>
      ))}
    </ul>
  )
}

export const FormsPage = ({ client }: { client: Client }) => {
  const forms = useResource(() => client.list<Form>("/v1/forms", { limit: "100" }), [client])
  const agents = useResource(() => client.list<Agent>("/v1/agents", { limit: "100" }), [client])
  const [agentId, setAgentId] = useState("")
  const create = useAction()
  const chosen = agentId !== "" ? agentId : agents.data?.data[0]?.id ?? ""
  return (
    <section>
      <h1>Forms</h1>
      <form
        class="card inline-form"
        aria-labelledby="new-form"
        onSubmit={async (e) => {
          e.preventDefault()
          let created: Form | undefined
          if (await create.run(async () => (created = await client.call<Form>("POST", "/v1/forms", { body: template(chosen) })))) {
            location.hash = `#/forms/${created!.id}`
          }
        }}
      >
        <h2 id="new-form">New contact form</h2>
        <Select
          label="Tickets go to agent"
          value={chosen}
          onChange={setAgentId}
          options={(agents.data?.data ?? []).map((a) => [a.id, a.name] as const)}
        />
        <button type="submit" class="primary" disabled={create.pending || chosen === ""}>
          Create form
        </button>
        {agents.data !== undefined && agents.data.data.length === 0 ? <span class="muted">Create an agent first.</span> : null}
        {create.error === undefined ? null : <ErrorBox error={create.error} />}
        {create.error === undefined ? null : <FieldErrors error={create.error} />}
      </form>
      <Loaded resource={forms} what="forms">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No forms yet.</Empty>
          ) : (
            <table>
              <caption>Forms</caption>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Id</th>
                  <th scope="col">Creates</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((f) => (
                  <tr key={f.id}>
                    <td>
                      <a href={`#/forms/${f.id}`}>{titleOf(f)}</a>
                    </td>
                    <td>
                      <code>{f.id}</code>
                    </td>
                    <td>{f.target.type}</td>
                    <td>{when(f.updated_at)}</td>
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

const previewKey = "console.forms-key"

const Editor = ({ client, form, onSaved }: { client: Client; form: Form; onSaved: () => void }) => {
  const [text, setText] = useState(() => JSON.stringify(editable(form), null, 2))
  const [saved, setSaved] = useState(0)
  const [key, setKey] = useState(sessionStorage.getItem(previewKey) ?? "")
  const [locale, setLocale] = useState("en")
  const save = useAction()
  const remove = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    const ok = await save.run(async () => {
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch (error) {
        throw new Error(`The definition is not valid JSON: ${(error as Error).message}`)
      }
      await client.call("PATCH", `/v1/forms/${form.id}`, { body })
    })
    if (ok) {
      setSaved((n) => n + 1)
      onSaved()
    }
  }
  const publicKey = key.trim()
  const previewable = /^pk_(test|live)_/.test(publicKey)
  return (
    <div class="editor">
      <form class="card" onSubmit={submit}>
        <Field
          label="Definition (JSON)"
          value={text}
          onInput={setText}
          multiline={24}
          hint="Title, fields, labels per locale, branding, width, appearance, target and settings, as the API takes them."
          name="definition"
        />
        <button type="submit" class="primary" disabled={save.pending}>
          Save form
        </button>
        <span role="status" class="saved">
          {saved > 0 && save.error === undefined ? "Saved." : ""}
        </span>
        {save.error === undefined ? null : <ErrorBox error={save.error} />}
        {save.error === undefined ? null : <FieldErrors error={save.error} />}
      </form>
      <div class="card preview">
        <h2>Preview</h2>
        <Field
          label="Forms public key"
          value={key}
          onInput={(value) => {
            sessionStorage.setItem(previewKey, value.trim())
            setKey(value)
          }}
          hint="A pk_test_… or pk_live_… key of this environment: the preview loads the form as a site would."
          name="forms-key"
        />
        <Select
          label="Preview locale"
          value={locale}
          onChange={setLocale}
          options={[
            ["en", "English"],
            ["es", "Spanish"]
          ]}
        />
        {previewable ? (
          <iframe
            key={`${saved}:${publicKey}:${locale}`}
            title="Form preview"
            src={`/console/form-preview?form_id=${encodeURIComponent(form.id)}&key=${encodeURIComponent(publicKey)}&locale=${locale}`}
          />
        ) : (
          <Empty>Enter a forms key to see the form.</Empty>
        )}
        <p class="muted small">
          Embed: <code>{`<service-form api-key="${publicKey || "pk_…"}" form-id="${form.id}"></service-form>`}</code>
        </p>
      </div>
      <div class="card danger-zone">
        <ConfirmButton
          label="Delete form"
          confirm="Sites embedding it stop showing it."
          onConfirm={async () => {
            if (await remove.run(() => client.call("DELETE", `/v1/forms/${form.id}`))) location.hash = "#/forms"
          }}
        />
        {remove.error === undefined ? null : <ErrorBox error={remove.error} />}
      </div>
    </div>
  )
}

export const FormPage = ({ client, formId }: { client: Client; formId: string }) => {
  const form = useResource<Form>(() => client.call("GET", `/v1/forms/${formId}`), [formId])
  return (
    <section>
      <p class="crumbs">
        <a href="#/forms">Forms</a> / {formId}
      </p>
      <h1>{form.data === undefined ? "Form" : titleOf(form.data)}</h1>
      <Loaded resource={form} what="the form">
        {(f) => <Editor client={client} form={f} onSaved={form.reload} key={f.id} />}
      </Loaded>
    </section>
  )
}

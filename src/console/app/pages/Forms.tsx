/**
 * Forms: the list, a new form from a starting template, and the editor: the
 * form's fields, texts and branding field by field (or its definition as JSON,
 * what `PATCH /v1/forms/{id}` takes), saved with the service's field errors
 * shown beside what they name, next to a `<service-form>` preview drawn with a
 * public forms key that follows the unsaved draft; the embed snippet and the
 * identity secret's rotation.
 */
import type { Agent } from "../../../../schema/Agents.js"
import type { Form } from "../../../../schema/Forms.js"
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiFailure, type Client } from "../api.js"
import { ConfirmButton, CopySecret, Empty, ErrorBox, Field, Loaded, Select, Snippet, useAction, useResource, when } from "../ui.js"

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

type Locale = "en" | "es"
type Localized = { en?: string; es?: string }
interface DraftField {
  id: string
  type: string
  label: Localized
  required?: boolean
  options?: Array<{ value: string; label: Localized }>
  [other: string]: unknown
}
interface Draft {
  title?: Localized
  fields?: Array<DraftField>
  submit_label?: Localized
  success_message?: Localized
  branding?: Record<string, string>
  [other: string]: unknown
}

const fieldTypes = ["text", "email", "textarea", "select", "checkbox", "hidden"] as const

/** One locale's text set in `text`; an empty value leaves that locale out. */
const setText = (text: Localized | undefined, locale: Locale, value: string): Localized => {
  const next: Localized = { ...text }
  if (value === "") delete next[locale]
  else next[locale] = value
  return next
}

/** The service's field errors (or the refused `param`) whose path starts with `prefix` (`fields.2`, `title`...). */
const errorsAt = (error: unknown, prefix: string) =>
  (error instanceof ApiFailure
    ? [...(error.fieldErrors ?? []), ...(error.param === undefined ? [] : [{ field: error.param, message: error.message }])]
    : []
  ).filter((d) => {
    const path = d.field.replace(/\[(\d+)\]/g, ".$1")
    return path === prefix || path.startsWith(`${prefix}.`)
  })

const Problems = ({ error, at }: { error: unknown; at: string }) => {
  const found = errorsAt(error, at)
  return found.length === 0 ? null : (
    <ul class="source-error field-problems">
      {found.map((d, i) => (
        <li key={i}>
          <code>{d.field}</code>: {d.message}
        </li>
      ))}
    </ul>
  )
}

/** A public config built from the unsaved draft: what the component would load once it is saved. */
const draftConfig = (draft: Draft) => {
  const orNull = (v: unknown) => (v === undefined ? null : v)
  return {
    title: draft.title ?? {},
    fields: (draft.fields ?? []).map((f) => ({
      id: f.id,
      type: f.type,
      label: f.label,
      help: orNull(f["help"]),
      placeholder: orNull(f["placeholder"]),
      required: f.required === true,
      min_length: orNull(f["min_length"]),
      max_length: orNull(f["max_length"]),
      pattern: orNull(f["pattern"]),
      options: f.type === "select" ? f.options ?? [] : null,
      default_value: orNull(f["default_value"])
    })),
    submit_label: orNull(draft.submit_label),
    success_message: orNull(draft.success_message),
    branding: draft.branding ?? {},
    ...(draft["width"] === undefined ? {} : { width: draft["width"] }),
    ...(draft["appearance"] === undefined ? {} : { appearance: draft["appearance"] })
  }
}

/**
 * Draws the draft in the preview frame (same origin): the frame's config
 * request is answered with the saved config overlaid with the draft, and the
 * component is made to load again by touching its `api-key` (trimmed by it).
 */
const showDraft = (frame: HTMLIFrameElement | null, draft: Draft) => {
  const win = frame?.contentWindow as (Window & typeof globalThis & { consoleFetch?: typeof fetch }) | null | undefined
  const element = frame?.contentDocument?.querySelector("service-form")
  if (win == null || element == null) return
  const original = win.consoleFetch ?? win.fetch.bind(win)
  win.consoleFetch = original
  const overlay = draftConfig(draft)
  win.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input), win.location.href)
    if (!/^\/v1\/forms\/[^/]+\/config$/.test(url.pathname)) return original(input, init)
    const headers = new Headers(init?.headers)
    headers.delete("if-none-match")
    const response = await original(input, { ...init, headers })
    if (!response.ok) return response
    const body = await response.json()
    return new Response(JSON.stringify({ ...body, data: { ...body.data, ...overlay } }), {
      status: 200,
      headers: { "content-type": "application/json" }
    })
  }
  const key = element.getAttribute("api-key") ?? ""
  element.setAttribute("api-key", key.endsWith(" ") ? key.trimEnd() : `${key} `)
}

const move = <A,>(items: ReadonlyArray<A>, from: number, to: number): Array<A> => {
  const next = [...items]
  const [item] = next.splice(from, 1)
  next.splice(to, 0, item!)
  return next
}

const FieldEditor = ({
  field,
  index,
  count,
  locale,
  error,
  onChange,
  onMove,
  onRemove
}: {
  field: DraftField
  index: number
  count: number
  locale: Locale
  error: unknown
  onChange: (field: DraftField) => void
  onMove: (to: number) => void
  onRemove: () => void
}) => {
  const name = field.label[locale] ?? field.id
  const options = field.options ?? []
  return (
    <fieldset class="form-field">
      <legend>
        Field {index + 1}: {name}
      </legend>
      <div class="field-grid">
        <Field label={`Label (${locale})`} value={field.label[locale] ?? ""} onInput={(v) => onChange({ ...field, label: setText(field.label, locale, v) })} />
        <Field label="Field id" value={field.id} onInput={(v) => onChange({ ...field, id: v })} />
        <Select
          label="Type"
          value={field.type}
          onChange={(type) => {
            const { options: _, ...rest } = field
            onChange(type === "select" ? { ...rest, type, options: options.length > 0 ? options : [{ value: "option_1", label: { [locale]: "Option 1" } }] } : { ...rest, type })
          }}
          options={fieldTypes.map((t) => [t, t] as const)}
        />
        <label class="check">
          <input type="checkbox" checked={field.required === true} onChange={(e) => onChange({ ...field, required: (e.currentTarget as HTMLInputElement).checked })} />
          Required
        </label>
      </div>
      {field.type !== "select" ? null : (
        <div class="options">
          {options.map((o, i) => (
            <div class="inline-form" key={i}>
              <Field
                label={`Option ${i + 1} value`}
                value={o.value}
                onInput={(v) => onChange({ ...field, options: options.map((x, j) => (j === i ? { ...x, value: v } : x)) })}
              />
              <Field
                label={`Option ${i + 1} label (${locale})`}
                value={o.label[locale] ?? ""}
                onInput={(v) => onChange({ ...field, options: options.map((x, j) => (j === i ? { ...x, label: setText(x.label, locale, v) } : x)) })}
              />
              <button type="button" disabled={options.length === 1} onClick={() => onChange({ ...field, options: options.filter((_, j) => j !== i) })}>
                Remove option {i + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            onClick={() => onChange({ ...field, options: [...options, { value: `option_${options.length + 1}`, label: { [locale]: `Option ${options.length + 1}` } }] })}
          >
            Add option to {name}
          </button>
        </div>
      )}
      <div class="row-actions">
        <button type="button" disabled={index === 0} onClick={() => onMove(index - 1)} aria-label={`Move ${name} up`}>
          Up
        </button>
        <button type="button" disabled={index === count - 1} onClick={() => onMove(index + 1)} aria-label={`Move ${name} down`}>
          Down
        </button>
        <button type="button" disabled={count === 1} onClick={onRemove} aria-label={`Remove ${name}`}>
          Remove
        </button>
      </div>
      <Problems error={error} at={`fields.${index}`} />
    </fieldset>
  )
}

const textKeys = [
  ["title", "Title"],
  ["submit_label", "Submit label"],
  ["success_message", "Success message"]
] as const

const brandingKeys = [
  ["--service-accent", "Accent colour", "#2563eb"],
  ["--service-button-bg", "Button colour", "#2563eb"],
  ["--service-text", "Text colour", "#1f2937"],
  ["--service-bg", "Background", "#ffffff"],
  ["--service-radius", "Corner radius", "8px"]
] as const

const FieldsEditor = ({ draft, setDraft, locale, error }: { draft: Draft; setDraft: (d: Draft) => void; locale: Locale; error: unknown }) => {
  const fields = draft.fields ?? []
  const setFields = (next: Array<DraftField>) => setDraft({ ...draft, fields: next })
  return (
    <>
      <h2>Texts</h2>
      {textKeys.map(([key, label]) => (
        <div key={key}>
          <Field
            label={`${label} (${locale})`}
            value={draft[key]?.[locale] ?? ""}
            multiline={key === "success_message" ? 2 : undefined}
            onInput={(v) => {
              const text = setText(draft[key], locale, v)
              const { [key]: _, ...rest } = draft
              setDraft(Object.keys(text).length === 0 && key !== "title" ? rest : { ...draft, [key]: text })
            }}
          />
          <Problems error={error} at={key} />
        </div>
      ))}
      <h2>Fields</h2>
      {fields.map((f, i) => (
        <FieldEditor
          key={i}
          field={f}
          index={i}
          count={fields.length}
          locale={locale}
          error={error}
          onChange={(next) => setFields(fields.map((x, j) => (j === i ? next : x)))}
          onMove={(to) => setFields(move(fields, i, to))}
          onRemove={() => setFields(fields.filter((_, j) => j !== i))}
        />
      ))}
      <button
        type="button"
        onClick={() => {
          let n = fields.length + 1
          while (fields.some((f) => f.id === `field_${n}`)) n++
          setFields([...fields, { id: `field_${n}`, type: "text", label: { [locale]: `Field ${n}` } }])
        }}
      >
        Add field
      </button>
      <h2>Branding</h2>
      <div class="field-grid">
        {brandingKeys.map(([key, label, example]) => (
          <Field
            key={key}
            label={label}
            value={draft.branding?.[key] ?? ""}
            placeholder={example}
            hint={key}
            onInput={(v) => {
              const { [key]: _, ...rest } = draft.branding ?? {}
              setDraft({ ...draft, branding: v.trim() === "" ? rest : { ...rest, [key]: v } })
            }}
          />
        ))}
      </div>
      <Problems error={error} at="branding" />
    </>
  )
}

const IdentitySecret = ({ client }: { client: Client }) => {
  const rotate = useAction()
  const [secret, setSecret] = useState<string | undefined>(undefined)
  return (
    <div class="card">
      <h2>Signed identity</h2>
      <p class="muted small">
        The workspace's identity secret for this environment signs the <code>identity</code> token your site passes to the form (Pro and above).
        Rotating replaces the old secret at once.
      </p>
      {secret === undefined ? (
        <ConfirmButton
          label="Rotate identity secret"
          confirm="Tokens signed with the old secret stop being accepted."
          onConfirm={async () => {
            await rotate.run(async () => setSecret((await client.call<{ secret: string }>("POST", "/v1/identity_secret/rotate")).secret))
          }}
        />
      ) : (
        <CopySecret label="New identity secret" secret={secret} onDone={() => setSecret(undefined)} />
      )}
      {rotate.error === undefined ? null : <ErrorBox error={rotate.error} />}
    </div>
  )
}

/** The form as a site shows it (with the unsaved draft), loaded with a forms key, and the snippet that embeds it. */
const Preview = ({ formId, draft, saved, locale }: { formId: string; draft: Draft; saved: number; locale: Locale }) => {
  const [key, setKey] = useState(sessionStorage.getItem(previewKey) ?? "")
  const frame = useRef<HTMLIFrameElement>(null)
  // the preview follows the draft, a moment after the last edit
  useEffect(() => {
    const timer = setTimeout(() => showDraft(frame.current, draft), 250)
    return () => clearTimeout(timer)
  }, [draft])
  const publicKey = key.trim()
  const previewable = /^pk_(test|live)_/.test(publicKey)
  const snippet = `<script type="module" src="${location.origin}/storage/v1/object/public/widget/v1/service-form-element.esm.js"></script>\n<service-form api-key="${publicKey || "pk_live_…"}" form-id="${formId}"></service-form>`
  return (
    <div class="card preview">
      <h2>Preview</h2>
      <Field
        label="Forms public key"
        value={key}
        onInput={(value) => {
          sessionStorage.setItem(previewKey, value.trim())
          setKey(value)
        }}
        hint="A pk_test_… or pk_live_… key of this environment: the preview loads the form as a site would, with your unsaved edits."
        name="forms-key"
      />
      {previewable ? (
        <iframe
          ref={frame}
          key={`${saved}:${publicKey}:${locale}`}
          title="Form preview"
          onLoad={() => showDraft(frame.current, draft)}
          src={`/console/form-preview?form_id=${encodeURIComponent(formId)}&key=${encodeURIComponent(publicKey)}&locale=${locale}`}
        />
      ) : (
        <Empty>Enter a forms key to see the form.</Empty>
      )}
      <Snippet id="embed-snippet" text={snippet} rows={4} />
    </div>
  )
}

const DeleteForm = ({ client, formId }: { client: Client; formId: string }) => {
  const remove = useAction()
  return (
    <div class="card danger-zone">
      <ConfirmButton
        label="Delete form"
        confirm="Sites embedding it stop showing it."
        onConfirm={async () => {
          if (await remove.run(() => client.call("DELETE", `/v1/forms/${formId}`))) location.hash = "#/forms"
        }}
      />
      {remove.error === undefined ? null : <ErrorBox error={remove.error} />}
    </div>
  )
}

/** A form's definition edited field by field, or as JSON (`advanced`), saved whole; beside it, its preview. */
const Editor = ({ client, form, onSaved }: { client: Client; form: Form; onSaved: () => void }) => {
  const [draft, setDraftState] = useState<Draft>(() => editable(form) as Draft)
  const [advanced, setAdvanced] = useState(false)
  const [text, setText] = useState("")
  const [textError, setTextError] = useState<string | undefined>(undefined)
  const [saved, setSaved] = useState(0)
  const [locale, setLocale] = useState<Locale>("en")
  const save = useAction()
  const setDraft = (next: Draft) => {
    setDraftState(next)
    setSaved(0)
  }
  const current = (): Draft => {
    if (!advanced) return draft
    try {
      return JSON.parse(text) as Draft
    } catch (error) {
      throw new Error(`The definition is not valid JSON: ${(error as Error).message}`)
    }
  }
  const submit = async (e: Event) => {
    e.preventDefault()
    const ok = await save.run(async () => {
      const body = current()
      await client.call("PATCH", `/v1/forms/${form.id}`, { body })
      setDraftState(body)
    })
    if (ok) {
      setSaved((n) => n + 1)
      onSaved()
    }
  }
  /** Into the JSON text, or back from it (kept while it does not parse). */
  const toggleAdvanced = () => {
    if (!advanced) {
      setText(JSON.stringify(draft, null, 2))
      setAdvanced(true)
      return
    }
    try {
      setDraft(JSON.parse(text) as Draft)
      setTextError(undefined)
      setAdvanced(false)
    } catch (error) {
      setTextError(`The definition is not valid JSON: ${(error as Error).message}`)
    }
  }
  return (
    <div class="editor">
      <form class="card" onSubmit={submit} aria-label="Form definition">
        <div class="inline-form">
          <Select
            label="Language"
            value={locale}
            onChange={(v) => setLocale(v === "es" ? "es" : "en")}
            options={[
              ["en", "English"],
              ["es", "Spanish"]
            ]}
          />
          <button type="button" aria-pressed={advanced} onClick={toggleAdvanced}>
            Advanced (JSON)
          </button>
        </div>
        {advanced ? (
          <Field
            label="Definition (JSON)"
            value={text}
            onInput={setText}
            multiline={24}
            hint="Title, fields, labels per locale, branding, width, appearance, target and settings, as the API takes them."
            name="definition"
          />
        ) : (
          <FieldsEditor draft={draft} setDraft={setDraft} locale={locale} error={save.error} />
        )}
        {textError === undefined ? null : <ErrorBox error={new Error(textError)} />}
        <div class="row-actions">
          <button type="submit" class="primary" disabled={save.pending}>
            Save form
          </button>
          <span role="status" class="saved">
            {saved > 0 && save.error === undefined ? "Saved." : ""}
          </span>
        </div>
        {save.error === undefined ? null : <ErrorBox error={save.error} />}
        {save.error === undefined || !advanced ? null : <FieldErrors error={save.error} />}
      </form>
      <div class="editor-side">
        <Preview formId={form.id} draft={draft} saved={saved} locale={locale} />
        <IdentitySecret client={client} />
      </div>
      <DeleteForm client={client} formId={form.id} />
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

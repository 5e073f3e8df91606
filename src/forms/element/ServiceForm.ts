/**
 * `<service-form>`: loads a form's public config, paints it in its own shadow
 * root (a skeleton until then, at once from the session cache on later views),
 * checks the values before sending, shows the server's field errors next to
 * their fields and raises the four `service-form:*` events. Everything taken
 * from the config or the page is placed with `textContent`/properties, never as
 * HTML.
 */
import { cachedConfig, defaultBaseUrl, getConfig, ServiceFormError, submit, type ConfigField, type FieldValue, type FormConfig } from "./api.js"
import { baseStyles, hostStyles, widthOf } from "./styles.js"
import { localized, pickLocale, textsFor, type Locale, type Texts } from "./texts.js"
import { checkField } from "./validate.js"

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement

const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string> = {},
  text?: string
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) node.setAttribute(name, value)
  if (text !== undefined) node.textContent = text
  return node
}

const idOf = (fieldId: string) => `sf-${fieldId}`
const errorIdOf = (fieldId: string) => `sf-${fieldId}-error`
const helpIdOf = (fieldId: string) => `sf-${fieldId}-help`

/** The honeypot's key: no real field id starts with `_`. */
const honeypotKey = "_hp"

export class ServiceFormElement extends HTMLElement {
  static readonly observedAttributes = [
    "api-key",
    "form-id",
    "locale",
    "prefill-name",
    "prefill-email",
    "prefill",
    "hidden-fields",
    "identity",
    "width",
    "appearance"
  ]

  readonly #root: ShadowRoot
  #config: FormConfig | undefined
  #form: HTMLFormElement | undefined
  /** Each load's number: an answer to an older load is dropped. */
  #loads = 0
  #readyRaised = false
  #touched = false
  #submitting = false
  #sent = false

  constructor() {
    super()
    this.#root = this.attachShadow({ mode: "open" })
  }

  connectedCallback() {
    if (this.#loads === 0) void this.#load()
  }

  attributeChangedCallback(name: string, before: string | null, after: string | null) {
    if (!this.isConnected || before === after || this.#loads === 0) return
    if (name === "api-key" || name === "form-id") void this.#load()
    else if (this.#config !== undefined && !this.#sent) this.#render()
  }

  get #formId() {
    return this.getAttribute("form-id")?.trim() ?? ""
  }

  #emit(type: string, detail: unknown) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }))
  }

  get #locale(): Locale {
    return pickLocale(this.getAttribute("locale"))
  }

  async #load() {
    const load = ++this.#loads
    const apiKey = this.getAttribute("api-key")?.trim() ?? ""
    const formId = this.#formId
    this.#config = undefined
    this.#readyRaised = false
    this.#sent = false
    this.#emit("service-form:loading", { formId })
    if (apiKey === "" || formId === "") {
      this.#fail("the `api-key` and `form-id` attributes are required")
      return
    }
    const cached = cachedConfig(defaultBaseUrl(), formId, apiKey)
    if (cached !== undefined) {
      this.#config = cached.body.data
      this.#render()
    } else this.#skeleton()
    try {
      const body = await getConfig({ apiKey, formId })
      if (load !== this.#loads) return
      const changed = JSON.stringify(body.data) !== JSON.stringify(this.#config)
      if (this.#config === undefined || (changed && !this.#touched && !this.#sent)) {
        this.#config = body.data
        this.#render()
      }
    } catch (error) {
      if (load !== this.#loads) return
      // a network failure keeps a cached form; a refusal (deleted form, revoked key) does not
      if (this.#config !== undefined && !(error instanceof ServiceFormError)) return
      this.#config = undefined
      this.#fail(error instanceof Error ? error.message : String(error))
    }
  }

  #styles(branding: Readonly<Record<string, string>>, width: string | number | null | undefined) {
    return [el("style", {}, baseStyles), el("style", {}, hostStyles(branding, widthOf(this.getAttribute("width") ?? width)))]
  }

  #appearance(config: FormConfig | undefined) {
    const attribute = this.getAttribute("appearance")?.trim().toLowerCase()
    return attribute === "bare" || attribute === "card" ? attribute : (config?.appearance ?? "card")
  }

  #skeleton() {
    const t = textsFor(this.#locale)
    const box = el("div", { class: `skeleton ${this.#appearance(undefined)}`, role: "status", "aria-busy": "true" })
    box.append(el("span", { class: "sr" }, t.loading))
    for (const kind of ["bone short", "bone tall", "bone short", "bone tall", "bone tall short"]) box.append(el("div", { class: kind }))
    this.#form = undefined
    this.#root.replaceChildren(...this.#styles({}, undefined), box)
  }

  #fail(message: string) {
    const t = textsFor(this.#locale)
    this.#form = undefined
    this.#root.replaceChildren(
      ...this.#styles({}, undefined),
      el("div", { part: "error", class: `error ${this.#appearance(undefined)}`, role: "alert" }, t.configFailed)
    )
    this.#emit("service-form:error", { formId: this.#formId, phase: "config", message })
  }

  /** Prefilled values: `prefill` (JSON by field id), then `prefill-name` and `prefill-email` over it. */
  #prefill(): Record<string, FieldValue> {
    const values: Record<string, FieldValue> = {}
    try {
      const parsed: unknown = JSON.parse(this.getAttribute("prefill") ?? "{}")
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        for (const [k, v] of Object.entries(parsed)) {
          if (typeof v === "string" || typeof v === "boolean") values[k] = v
          else if (typeof v === "number") values[k] = String(v)
        }
      }
    } catch {
      // not JSON: no prefill from it
    }
    const name = this.getAttribute("prefill-name")
    const email = this.getAttribute("prefill-email")
    if (name !== null) values["name"] = name
    if (email !== null) values["email"] = email
    return values
  }

  #hiddenIds(config: FormConfig) {
    const listed = new Set((this.getAttribute("hidden-fields") ?? "").split(",").map((s) => s.trim()).filter((s) => s !== ""))
    return new Set(config.fields.filter((f) => f.type === "hidden" || listed.has(f.id)).map((f) => f.id))
  }

  #render() {
    const config = this.#config
    if (config === undefined) return
    const locale = this.#locale
    const t = textsFor(locale)
    const kept = this.#form === undefined ? {} : this.#currentValues(config)
    const values = { ...this.#prefill(), ...kept }
    const hidden = this.#hiddenIds(config)

    const form = el("form", { part: "form", class: `form ${this.#appearance(config)}`, novalidate: "", lang: locale, "aria-labelledby": "sf-title" })
    const title = localized(config.title, locale)
    form.append(el("h2", { part: "title", class: "title", id: "sf-title" }, title ?? ""))
    for (const field of config.fields) {
      if (!hidden.has(field.id)) form.append(this.#fieldBlock(field, locale, t, values[field.id]))
    }
    // the decoy people never see or reach; a bot that fills it is answered 204 and dropped
    const decoy = el("div", { class: "hp", "aria-hidden": "true" })
    decoy.append(el("label", { for: idOf(honeypotKey) }, "Website"), el("input", { id: idOf(honeypotKey), name: honeypotKey, type: "text", tabindex: "-1", autocomplete: "off" }))
    form.append(decoy)

    const footer = el("div", { part: "footer", class: "footer" })
    const button = el("button", { part: "submit", class: "submit", type: "submit" }, localized(config.submit_label, locale) ?? t.submit)
    footer.append(button, el("div", { part: "error", class: "error", id: "sf-status", role: "alert" }))
    form.append(footer)
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.#submit()
    })
    form.addEventListener("input", (event) => {
      this.#touched = true
      const target = event.target as Control
      if (target.name !== honeypotKey) this.#setFieldError(target.name, undefined)
    })
    this.#form = form
    this.#root.replaceChildren(...this.#styles(config.branding, config.width), form)
    if (!this.#readyRaised) {
      this.#readyRaised = true
      this.#emit("service-form:ready", { formId: config.id, fields: config.fields })
    }
  }

  #fieldBlock(field: ConfigField, locale: Locale, t: Texts, value: FieldValue | undefined) {
    const block = el("div", { part: "field", class: field.type === "checkbox" ? "field check" : "field", "data-field": field.id })
    // the required mark is drawn by CSS with empty alt text: `aria-required` says it to assistive technology
    const label = el("label", { part: "label", class: field.required ? "label required" : "label", for: idOf(field.id) }, localized(field.label, locale) ?? field.id)
    const common: Record<string, string> = { id: idOf(field.id), name: field.id }
    if (field.required) common["aria-required"] = "true"
    const help = localized(field.help, locale)
    if (help !== undefined) common["aria-describedby"] = helpIdOf(field.id)
    const placeholder = localized(field.placeholder, locale)
    if (placeholder !== undefined) common["placeholder"] = placeholder

    let control: Control
    if (field.type === "select") {
      const select = el("select", { ...common, part: "select", class: "select" })
      select.append(el("option", { value: "" }, t.choose))
      for (const option of field.options ?? []) select.append(el("option", { value: option.value }, localized(option.label, locale) ?? option.value))
      select.value = typeof value === "string" ? value : ""
      control = select
    } else if (field.type === "textarea") {
      control = el("textarea", { ...common, part: "input", class: "input" })
      control.value = typeof value === "string" ? value : ""
    } else if (field.type === "checkbox") {
      const box = el("input", { ...common, part: "input", type: "checkbox" })
      box.checked = value === true || value === "true"
      control = box
    } else {
      const autocomplete = field.id === "name" ? "name" : field.type === "email" ? "email" : undefined
      control = el("input", { ...common, part: "input", class: "input", type: field.type === "email" ? "email" : "text", ...(autocomplete ? { autocomplete } : {}) })
      control.value = typeof value === "string" ? value : ""
    }
    if (field.type === "checkbox") block.append(control, label)
    else block.append(label, control)
    if (help !== undefined) block.append(el("div", { class: "help", id: helpIdOf(field.id) }, help))
    block.append(el("div", { part: "error field-error", class: "field-error", id: errorIdOf(field.id) }))
    return block
  }

  #control(fieldId: string): Control | null {
    return this.#form?.querySelector<Control>(`[name="${CSS.escape(fieldId)}"]`) ?? null
  }

  /** The values of the rendered fields (what the person typed). */
  #currentValues(config: FormConfig): Record<string, FieldValue> {
    const values: Record<string, FieldValue> = {}
    for (const field of config.fields) {
      const control = this.#control(field.id)
      if (control === null) continue
      values[field.id] = control instanceof HTMLInputElement && control.type === "checkbox" ? control.checked : control.value
    }
    return values
  }

  /** What is sent: rendered fields as typed, hidden ones from the prefill or their default. */
  #valuesToSend(config: FormConfig): Record<string, FieldValue> {
    const prefill = this.#prefill()
    const values: Record<string, FieldValue> = { ...this.#currentValues(config) }
    for (const id of this.#hiddenIds(config)) {
      const field = config.fields.find((f) => f.id === id)!
      const value = prefill[id] ?? field.default_value
      if (value !== null && value !== undefined) values[id] = field.type === "checkbox" ? value === true || value === "true" : value
    }
    const decoy = this.#control(honeypotKey)
    // always sent: a filled decoy makes the server answer 204 and store nothing
    if (decoy !== null) values[honeypotKey] = decoy.value
    return values
  }

  #setFieldError(fieldId: string, message: string | undefined) {
    const control = this.#control(fieldId)
    const error = this.#root.getElementById(errorIdOf(fieldId))
    if (control === null || error === null) return false
    error.textContent = message ?? ""
    const described = (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id !== "" && id !== error.id)
    if (message === undefined) control.removeAttribute("aria-invalid")
    else {
      control.setAttribute("aria-invalid", "true")
      described.push(error.id)
    }
    if (described.length > 0) control.setAttribute("aria-describedby", described.join(" "))
    else control.removeAttribute("aria-describedby")
    return true
  }

  #status(message: string) {
    const status = this.#root.getElementById("sf-status")
    if (status !== null) status.textContent = message
  }

  /** Shows each error next to its field (others in the status line), announces a summary, focuses the first. */
  #showErrors(errors: ReadonlyArray<{ field: string; message: string }>, t: Texts) {
    const elsewhere: Array<string> = []
    let first: Control | null = null
    for (const e of errors) {
      if (this.#setFieldError(e.field, e.message)) first ??= this.#control(e.field)
      else elsewhere.push(e.message)
    }
    const shown = errors.length - elsewhere.length
    this.#status([...(shown > 0 ? [t.summary(shown)] : []), ...elsewhere].join(". "))
    first?.focus()
  }

  async #submit() {
    const config = this.#config
    const form = this.#form
    if (config === undefined || form === undefined || this.#submitting) return
    const t = textsFor(this.#locale)
    const hidden = this.#hiddenIds(config)
    for (const field of config.fields) if (!hidden.has(field.id)) this.#setFieldError(field.id, undefined)
    this.#status("")
    const values = this.#valuesToSend(config)
    const errors = config.fields
      .filter((f) => !hidden.has(f.id))
      .flatMap((f) => {
        const message = checkField(f, values[f.id], t)
        return message === undefined ? [] : [{ field: f.id, message }]
      })
    if (errors.length > 0) {
      this.#showErrors(errors, t)
      return
    }

    const button = form.querySelector<HTMLButtonElement>("button[type=submit]")!
    const label = button.textContent ?? ""
    this.#submitting = true
    button.disabled = true
    button.textContent = t.sending
    form.setAttribute("aria-busy", "true")
    try {
      const body = await submit({
        apiKey: this.getAttribute("api-key")?.trim() ?? "",
        formId: config.id,
        fields: values,
        identity: this.getAttribute("identity"),
        locale: this.#locale
      })
      this.#sent = true
      const done = el("p", { part: "success", class: `success ${this.#appearance(config)}`, role: "status", tabindex: "-1" }, localized(config.success_message, this.#locale) ?? t.success)
      this.#form = undefined
      this.#root.replaceChildren(...this.#styles(config.branding, config.width), done)
      done.focus()
      this.#emit("service-form:success", body)
    } catch (error) {
      const failure = error instanceof ServiceFormError ? error : undefined
      const fieldErrors: unknown = failure?.body?.error?.field_errors
      if (failure?.status === 400 && Array.isArray(fieldErrors)) {
        this.#showErrors(fieldErrors.filter((e) => typeof e?.field === "string" && typeof e?.message === "string"), t)
      } else if (failure?.status === 429) {
        this.#status(t.rateLimited(Math.max(1, Math.ceil((failure.retryAfter ?? 60) / 60))))
      } else this.#status(t.generic)
      this.#emit("service-form:error", { formId: config.id, phase: "submit", message: error instanceof Error ? error.message : String(error) })
    } finally {
      this.#submitting = false
      form.removeAttribute("aria-busy")
      button.disabled = false
      button.textContent = label
    }
  }
}

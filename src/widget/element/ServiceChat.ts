/**
 * `<service-chat>`: a launcher button and a chat panel in the element's own
 * shadow root. The agent's config names and colours it; the conversation is
 * kept per agent in localStorage and its history drawn again after a reload;
 * replies stream token by token and resume after a dropped connection with
 * `Last-Event-ID`. Everything taken from the service or the page is placed
 * with `textContent`/properties, never as HTML; styles are adopted sheets.
 */
import {
  captureLead,
  ChatError,
  ChatNetworkError,
  conversationEvents,
  defaultBaseUrl,
  escalate,
  getConfig,
  getConversation,
  openConversation,
  rate,
  readEvents,
  readKept,
  resumeMessage,
  sendMessage,
  writeKept,
  type ChatConfig,
  type ChatMessage,
  type Handoff,
  type Source,
  type Target
} from "./api.js"
import { baseStyles, hostStyles, sheet } from "./styles.js"
import { pickLocale, textsFor, type Texts } from "./texts.js"

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

const chatIcon = () => {
  const ns = "http://www.w3.org/2000/svg"
  const svg = document.createElementNS(ns, "svg")
  svg.setAttribute("viewBox", "0 0 24 24")
  svg.setAttribute("aria-hidden", "true")
  svg.setAttribute("focusable", "false")
  const path = document.createElementNS(ns, "path")
  path.setAttribute("d", "M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z")
  svg.append(path)
  return svg
}

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** How many times a dropped reply is resumed before the visitor is told. */
const maxResumes = 5
/** How many times the conversation's event stream is reopened in a row without an event. */
const maxReconnects = 8

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface Bubble {
  readonly node: HTMLElement
  readonly text: HTMLElement
  messageId: string | undefined
}

export class ServiceChatElement extends HTMLElement {
  static readonly observedAttributes = ["open", "locale"]

  readonly #root: ShadowRoot
  #config: ChatConfig | undefined
  #failed: string | undefined
  #started = false
  #busy = false
  #conversationId: string | undefined
  #handoff: Handoff["status"] | undefined
  #watching: AbortController | undefined
  /** The message the visitor typed while the lead form asks for an e-mail first. */
  #held: string | undefined
  #askMode: "lead" | "escalate" | undefined
  #restored: Promise<void> = Promise.resolve()

  // the parts, built once
  readonly #wrap = el("div", { class: "root" })
  readonly #launcher = el("button", { part: "launcher", class: "launcher", type: "button", "aria-expanded": "false", "aria-controls": "sc-panel" })
  readonly #panel = el("div", { part: "panel", class: "panel", id: "sc-panel", role: "dialog", "aria-modal": "true", "aria-labelledby": "sc-title", hidden: "" })
  readonly #title = el("h2", { part: "title", class: "title", id: "sc-title" })
  readonly #close = el("button", { part: "close", class: "close", type: "button" }, "×")
  readonly #log = el("div", { part: "messages", class: "log", role: "log", "aria-live": "polite", "aria-relevant": "additions text", tabindex: "0" })
  readonly #ask = el("form", { part: "ask", class: "ask", hidden: "", novalidate: "" })
  readonly #askIntro = el("p", { class: "notice" })
  readonly #email = el("input", { id: "sc-email", name: "email", type: "email", autocomplete: "email", required: "" })
  readonly #name = el("input", { id: "sc-name", name: "name", type: "text", autocomplete: "name" })
  readonly #emailLabel = el("label", { for: "sc-email" })
  readonly #nameLabel = el("label", { for: "sc-name" })
  readonly #askError = el("p", { class: "notice error", id: "sc-ask-error", role: "alert" })
  readonly #askSubmit = el("button", { class: "primary", type: "submit" })
  readonly #askCancel = el("button", { class: "secondary", type: "button" })
  readonly #form = el("form", { part: "compose", class: "compose" })
  readonly #inputLabel = el("label", { for: "sc-input", class: "sr" })
  readonly #input = el("textarea", { part: "input", class: "input", id: "sc-input", name: "message", rows: "1", maxlength: "4000" })
  readonly #send = el("button", { part: "send", class: "send", type: "submit" })
  readonly #talk = el("button", { part: "talk", class: "talk", type: "button", hidden: "" })

  constructor() {
    super()
    this.#root = this.attachShadow({ mode: "open" })
    const header = el("div", { part: "header", class: "header" })
    header.append(this.#title, this.#close)
    const emailRow = el("div", { class: "row" })
    emailRow.append(this.#askCancel, this.#askSubmit)
    this.#ask.append(this.#askIntro, this.#emailLabel, this.#email, this.#nameLabel, this.#name, this.#askError, emailRow)
    this.#form.append(this.#inputLabel, this.#input, this.#send)
    const footer = el("div", { part: "footer", class: "footer" })
    footer.append(this.#form, this.#talk)
    this.#panel.append(header, this.#log, this.#ask, footer)
    this.#launcher.append(chatIcon())
    this.#wrap.append(this.#panel, this.#launcher)

    this.#launcher.addEventListener("click", () => (this.#panel.hidden ? this.show() : this.hide()))
    this.#close.addEventListener("click", () => this.hide())
    this.#panel.addEventListener("keydown", (event) => this.#keydown(event))
    this.#form.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.#submit()
    })
    this.#input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault()
        void this.#submit()
      }
    })
    this.#ask.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.#answerAsk()
    })
    this.#askCancel.addEventListener("click", () => this.#closeAsk())
    this.#talk.addEventListener("click", () => void this.#talkToPerson())
  }

  get #t(): Texts {
    return textsFor(pickLocale(this.getAttribute("locale")))
  }

  get #target(): Target {
    const base = (this.getAttribute("base-url")?.trim() || defaultBaseUrl()).replace(/\/+$/, "")
    return { base, apiKey: this.getAttribute("api-key")?.trim() ?? "", agentId: this.getAttribute("agent-id")?.trim() ?? "" }
  }

  get #agentName(): string {
    return this.#config?.name ?? this.#t.chat
  }

  connectedCallback() {
    if (this.#started) return
    this.#started = true
    this.#paintTexts()
    this.#adopt()
    this.#root.replaceChildren(this.#wrap)
    if (this.hasAttribute("open")) this.show()
    void this.#load()
  }

  disconnectedCallback() {
    this.#watching?.abort()
    this.#watching = undefined
  }

  attributeChangedCallback(name: string, before: string | null, after: string | null) {
    if (!this.#started || before === after) return
    if (name === "open") {
      if (after === null) this.hide()
      else this.show()
    } else this.#paintTexts()
  }

  #emit(type: string, detail: unknown) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }))
  }

  #adopt() {
    const sheets = [sheet(baseStyles), sheet(hostStyles(this.#config?.color))].filter((s): s is CSSStyleSheet => s !== null)
    this.#root.adoptedStyleSheets = sheets
  }

  /** The component's own texts, in the locale; drawn again when `locale` changes. */
  #paintTexts() {
    const t = this.#t
    this.#panel.setAttribute("lang", pickLocale(this.getAttribute("locale")))
    this.#launcher.setAttribute("aria-label", t.open(this.#agentName))
    this.#title.textContent = this.#agentName
    this.#close.setAttribute("aria-label", t.close)
    this.#log.setAttribute("aria-label", t.messages)
    this.#inputLabel.textContent = t.input
    this.#input.placeholder = t.placeholder
    this.#send.textContent = t.send
    this.#talk.textContent = t.talk
    this.#emailLabel.textContent = t.emailLabel
    this.#nameLabel.textContent = t.nameLabel
    this.#askSubmit.textContent = t.continue
    this.#askCancel.textContent = t.cancel
  }

  /** Opens the panel and puts the focus in its text box. */
  show() {
    if (!this.#panel.hidden) return
    this.#panel.hidden = false
    this.#launcher.setAttribute("aria-expanded", "true")
    this.#launcher.setAttribute("aria-label", this.#t.close)
    this.#scroll()
    void this.#restored.then(() => {
      if (this.#panel.hidden) return
      if (this.#root.activeElement === null || this.#root.activeElement === this.#launcher) {
        ;(this.#ask.hidden ? this.#input : this.#email).focus()
      }
      this.#emit("service-chat:open", { agentId: this.#target.agentId })
    })
  }

  /** Closes the panel; the focus goes back to the launcher. */
  hide() {
    if (this.#panel.hidden) return
    this.#panel.hidden = true
    this.#launcher.setAttribute("aria-expanded", "false")
    this.#launcher.setAttribute("aria-label", this.#t.open(this.#agentName))
    this.#launcher.focus()
    this.#emit("service-chat:close", { agentId: this.#target.agentId })
  }

  #keydown(event: KeyboardEvent) {
    if (event.key === "Escape") {
      event.preventDefault()
      this.hide()
      return
    }
    if (event.key !== "Tab") return
    // the focus stays in the open panel (and its launcher, which closes it)
    const focusable = Array.from(this.#panel.querySelectorAll<HTMLElement>("button,input,textarea,a[href],[tabindex='0']")).filter((n) => !(n as HTMLButtonElement).disabled && n.getClientRects().length > 0)
    if (focusable.length === 0) return
    const first = focusable[0]!
    const last = focusable[focusable.length - 1]!
    const active = this.#root.activeElement
    if (event.shiftKey && (active === first || !this.#panel.contains(active))) {
      event.preventDefault()
      last.focus()
    } else if (!event.shiftKey && (active === last || !this.#panel.contains(active))) {
      event.preventDefault()
      first.focus()
    }
  }

  async #load() {
    const target = this.#target
    const t = this.#t
    if (target.apiKey === "" || target.agentId === "") {
      this.#fail("config", "the `api-key` and `agent-id` attributes are required", t.loadFailed)
      return
    }
    let done: () => void = () => {}
    this.#restored = new Promise<void>((resolve) => (done = resolve))
    try {
      this.#config = await getConfig(target)
    } catch (error) {
      // a refused origin is answered without CORS headers: the page sees a network error
      const refused = error instanceof ChatNetworkError || (error instanceof ChatError && error.code === "origin_not_allowed")
      this.#fail("config", error instanceof Error ? error.message : String(error), refused ? t.refused : t.loadFailed)
      done()
      return
    }
    this.#wrap.classList.toggle("left", this.#config.launcher_position === "bottom-left")
    this.#adopt()
    this.#paintTexts()
    this.#talk.hidden = false
    if (this.#config.welcome_message) {
      this.#log.prepend(el("div", { part: "message welcome", class: "msg welcome" }, this.#config.welcome_message))
    }
    await this.#restore()
    done()
    this.#emit("service-chat:ready", { agentId: target.agentId, name: this.#config.name })
  }

  #fail(phase: string, message: string, shown: string) {
    this.#failed = shown
    this.#notice(shown, true)
    this.#input.disabled = true
    this.#send.disabled = true
    this.#talk.hidden = true
    this.#emit("service-chat:error", { phase, message })
  }

  /** The kept conversation's history drawn again; an ended or unknown one is forgotten quietly. */
  async #restore() {
    const target = this.#target
    const kept = readKept(target)
    if (kept.conversationId === undefined) return
    try {
      const conversation = await getConversation(target, kept.conversationId)
      if (conversation.status === "ended") {
        writeKept(target, { conversationId: undefined, pending: undefined, eventsId: undefined })
        return
      }
      this.#conversationId = conversation.id
      for (const message of conversation.messages) this.#drawMessage(message)
      this.#applyHandoff(conversation.handoff ?? null, false)
      const pending = kept.pending
      if (pending !== undefined && !conversation.messages.some((m) => m.id === pending.messageId)) {
        // the reply was still streaming when the page went away: all of it again, from its first event
        void this.#resumeReply(this.#bubble(), pending.messageId, undefined, 0)
      }
    } catch (error) {
      if (error instanceof ChatError && (error.status === 404 || error.status === 400)) {
        writeKept(target, { conversationId: undefined, pending: undefined, eventsId: undefined })
      }
    }
  }

  #scroll() {
    this.#log.scrollTop = this.#log.scrollHeight
  }

  #notice(text: string, error = false) {
    const node = el("p", { part: error ? "notice error" : "notice", class: error ? "notice error" : "notice", role: error ? "alert" : "status" }, text)
    this.#log.append(node)
    this.#scroll()
    return node
  }

  #who(role: ChatMessage["role"]) {
    const t = this.#t
    return role === "user" ? t.you : role === "member" ? t.person : this.#agentName
  }

  #drawMessage(message: ChatMessage) {
    if (message.role === "assistant") {
      const bubble = this.#bubble()
      bubble.node.classList.remove("typing")
      bubble.text.textContent = message.content
      this.#sources(bubble, message.sources)
      this.#finish(bubble, message.id, message.feedback?.rating ?? null)
    } else this.#plain(message.role, message.content, message.id)
  }

  #plain(role: "user" | "member", content: string, id?: string) {
    const node = el("div", { part: `message ${role}`, class: `msg ${role}` })
    if (id !== undefined) node.dataset["messageId"] = id
    node.append(el("span", { class: role === "user" ? "sr" : "who" }, this.#who(role)), el("span", {}, content))
    this.#log.append(node)
    this.#scroll()
  }

  /** An assistant reply's bubble, in its typing state until its first token. */
  #bubble(): Bubble {
    const node = el("div", { part: "message assistant", class: "msg assistant typing" })
    const text = el("span", { class: "text" })
    const typing = el("span", { class: "status" }, this.#t.typing(this.#agentName))
    node.append(el("span", { class: "who" }, this.#agentName), text, typing)
    this.#log.append(node)
    this.#scroll()
    return { node, text, messageId: undefined }
  }

  #sources(bubble: Bubble, sources: ReadonlyArray<Source>) {
    bubble.node.querySelector(".sources")?.remove()
    if (sources.length === 0) return
    const list = el("ul", { part: "sources", class: "sources", "aria-label": this.#t.sources })
    const seen = new Set<string>()
    for (const source of sources) {
      const key = `${source.title}\u0000${source.url ?? ""}`
      if (seen.has(key)) continue
      seen.add(key)
      const item = el("li")
      if (source.url !== null && /^https?:\/\//i.test(source.url)) {
        item.append(el("a", { part: "source", href: source.url, target: "_blank", rel: "noopener noreferrer" }, source.title))
      } else item.append(el("span", { part: "source" }, source.title))
      list.append(item)
    }
    bubble.node.append(list)
  }

  /** A finished reply: its id, and the two rating buttons (pressed state, changeable). */
  #finish(bubble: Bubble, messageId: string, rating: "up" | "down" | null) {
    bubble.messageId = messageId
    bubble.node.dataset["messageId"] = messageId
    bubble.node.classList.remove("typing")
    bubble.node.querySelector(".status")?.remove()
    const t = this.#t
    const row = el("div", { part: "rating", class: "rating" })
    const up = el("button", { part: "rate", class: "rate", type: "button", "aria-pressed": String(rating === "up") }, t.helpful)
    const down = el("button", { part: "rate", class: "rate", type: "button", "aria-pressed": String(rating === "down") }, t.notHelpful)
    // one rating request at a time, in the order of the clicks: two at once could land in the other order
    let sending: Promise<void> = Promise.resolve()
    const press = (chosen: "up" | "down") => {
      const before = up.getAttribute("aria-pressed") === "true" ? "up" : down.getAttribute("aria-pressed") === "true" ? "down" : null
      const next = before === chosen ? null : chosen
      up.setAttribute("aria-pressed", String(next === "up"))
      down.setAttribute("aria-pressed", String(next === "down"))
      const conversationId = this.#conversationId
      if (conversationId === undefined) return
      sending = sending.then(async () => {
        try {
          await rate(this.#target, conversationId, messageId, next)
          this.#emit("service-chat:feedback", { messageId, rating: next })
        } catch {
          up.setAttribute("aria-pressed", String(before === "up"))
          down.setAttribute("aria-pressed", String(before === "down"))
        }
      })
    }
    up.addEventListener("click", () => press("up"))
    down.addEventListener("click", () => press("down"))
    row.append(up, down)
    bubble.node.append(row)
  }

  async #ensureConversation(): Promise<string> {
    if (this.#conversationId !== undefined) return this.#conversationId
    const conversation = await openConversation(this.#target, { page: location.href.slice(0, 500), locale: pickLocale(this.getAttribute("locale")) })
    this.#conversationId = conversation.id
    writeKept(this.#target, { conversationId: conversation.id, pending: undefined, eventsId: undefined })
    return conversation.id
  }

  #setBusy(busy: boolean) {
    this.#busy = busy
    this.#send.disabled = busy || this.#failed !== undefined
    if (busy) this.#log.setAttribute("aria-busy", "true")
    else this.#log.removeAttribute("aria-busy")
  }

  async #submit() {
    if (this.#busy || this.#failed !== undefined || this.#config === undefined) return
    const text = this.#input.value.trim()
    if (text === "") return
    const kept = readKept(this.#target)
    if (this.#config.lead_capture === "before_first_message" && kept.leadEmail === undefined) {
      this.#held = text
      this.#openAsk("lead")
      return
    }
    this.#input.value = ""
    this.#plain("user", text)
    await this.#sendText(text, false)
  }

  #errorText(error: unknown): string {
    const t = this.#t
    if (error instanceof ChatError) {
      if (error.code === "limit_reached") return t.limit
      if (error.code === "ai_unavailable") return error.retryAfter === undefined ? t.aiLater : t.aiWait(error.retryAfter)
    }
    return t.failed
  }

  /** A reply stream's `error` event: a provider outage says how long to wait when the event gives `retry_after`. */
  #streamErrorText(data: { code?: unknown; retry_after?: unknown }): string {
    const t = this.#t
    const wait = typeof data.retry_after === "number" && data.retry_after > 0 ? data.retry_after : undefined
    if (data.code === "limit_reached") return t.limit
    if (data.code === "ai_unavailable") return wait === undefined ? t.aiLater : t.aiWait(wait)
    // a provider's failure mid-reply carries the wait too; a reply stopped for want of a reader does not
    if (data.code === "service_unavailable" && wait !== undefined) return t.aiWait(wait)
    return t.interrupted
  }

  async #sendText(text: string, retried: boolean): Promise<void> {
    this.#setBusy(true)
    const bubble = this.#bubble()
    try {
      const conversationId = await this.#ensureConversation()
      const response = await sendMessage(this.#target, conversationId, text, pickLocale(this.getAttribute("locale")))
      await this.#consume(response, bubble, 0)
    } catch (error) {
      bubble.node.remove()
      if (!retried && error instanceof ChatError && error.status === 404) {
        // the kept conversation is gone: a new one, quietly
        this.#conversationId = undefined
        writeKept(this.#target, { conversationId: undefined, pending: undefined, eventsId: undefined })
        this.#setBusy(false)
        return this.#sendText(text, true)
      }
      this.#notice(this.#errorText(error), true)
      this.#emit("service-chat:error", { phase: "message", message: error instanceof Error ? error.message : String(error) })
    } finally {
      this.#setBusy(false)
    }
  }

  /** Reads a reply's events into its bubble; a stream that ends before its last event is resumed. */
  async #consume(response: Response, bubble: Bubble, resumes: number, lastEventId?: string): Promise<void> {
    const target = this.#target
    let last = lastEventId
    let text = bubble.text.textContent ?? ""
    for await (const event of readEvents(response)) {
      if (event.id !== undefined) last = event.id
      const data = event.data
      switch (data?.type) {
        case "conversation":
          this.#conversationId = data.conversation_id
          bubble.messageId = data.message_id
          writeKept(target, { conversationId: data.conversation_id, pending: { messageId: data.message_id, lastEventId: last } })
          break
        case "token":
          if (bubble.node.classList.contains("typing")) {
            bubble.node.classList.remove("typing")
            bubble.node.querySelector(".status")?.remove()
          }
          text += String(data.content ?? "")
          bubble.text.textContent = text
          this.#scroll()
          break
        case "sources":
          this.#sources(bubble, Array.isArray(data.sources) ? data.sources : [])
          break
        case "escalation":
          if (typeof data.message === "string") this.#notice(data.message)
          break
        case "handoff":
          this.#applyHandoff(data.handoff ?? null, true)
          break
        case "done":
          writeKept(target, { pending: undefined })
          if (text === "") bubble.node.remove()
          else this.#finish(bubble, data.message_id ?? bubble.messageId, null)
          this.#emit("service-chat:reply", { conversationId: data.conversation_id, messageId: data.message_id, content: text })
          return
        case "error":
          writeKept(target, { pending: undefined })
          if (text === "") bubble.node.remove()
          else bubble.node.classList.remove("typing")
          this.#notice(this.#streamErrorText(data), true)
          this.#emit("service-chat:error", { phase: "reply", code: data.code, message: data.message })
          return
      }
    }
    // the body ended before `done` or `error`: the connection dropped
    if (bubble.messageId === undefined) throw new Error("the reply's stream ended before naming the reply")
    writeKept(target, { pending: { messageId: bubble.messageId, lastEventId: last } })
    await this.#resumeReply(bubble, bubble.messageId, last, resumes)
  }

  async #resumeReply(bubble: Bubble, messageId: string, lastEventId: string | undefined, resumes: number): Promise<void> {
    const conversationId = this.#conversationId
    if (conversationId === undefined) return
    for (let attempt = resumes; attempt < maxResumes; attempt++) {
      await sleep(Math.min(4000, 250 * 2 ** attempt))
      let response: Response
      try {
        response = await resumeMessage(this.#target, conversationId, messageId, lastEventId)
      } catch (error) {
        if (error instanceof ChatError) break
        continue
      }
      this.#setBusy(true)
      try {
        return await this.#consume(response, bubble, attempt + 1, lastEventId)
      } finally {
        this.#setBusy(false)
      }
    }
    writeKept(this.#target, { pending: undefined })
    if ((bubble.text.textContent ?? "") === "") bubble.node.remove()
    else bubble.node.classList.remove("typing")
    bubble.node.querySelector(".status")?.remove()
    this.#notice(this.#t.interrupted, true)
  }

  #openAsk(mode: "lead" | "escalate") {
    const t = this.#t
    this.#askMode = mode
    this.#askIntro.textContent = mode === "lead" ? t.leadIntro : t.escalateIntro
    this.#askError.textContent = ""
    this.#email.removeAttribute("aria-invalid")
    this.#email.removeAttribute("aria-describedby")
    this.#ask.hidden = false
    this.#email.focus()
  }

  #closeAsk() {
    this.#ask.hidden = true
    this.#askMode = undefined
    this.#held = undefined
    this.#input.focus()
  }

  async #answerAsk() {
    const email = this.#email.value.trim()
    const name = this.#name.value.trim() || undefined
    if (!emailShape.test(email)) {
      this.#askError.textContent = this.#t.badEmail
      this.#email.setAttribute("aria-invalid", "true")
      this.#email.setAttribute("aria-describedby", "sc-ask-error")
      this.#email.focus()
      return
    }
    const mode = this.#askMode
    const held = this.#held
    this.#ask.hidden = true
    this.#askMode = undefined
    this.#held = undefined
    this.#input.focus()
    if (mode === "lead") {
      await this.#capture(email, name)
      if (held !== undefined) {
        this.#input.value = ""
        this.#plain("user", held)
        await this.#sendText(held, false)
      }
    } else if (mode === "escalate") {
      if (this.#config?.lead_capture !== "off") await this.#capture(email, name)
      else writeKept(this.#target, { leadEmail: email })
      await this.#escalate(email, name)
    }
  }

  async #capture(email: string, name: string | undefined) {
    writeKept(this.#target, { leadEmail: email })
    try {
      await captureLead(this.#target, email, name, this.#conversationId)
      this.#emit("service-chat:lead", { email })
    } catch (error) {
      this.#emit("service-chat:error", { phase: "lead", message: error instanceof Error ? error.message : String(error) })
    }
  }

  async #talkToPerson() {
    if (this.#busy || this.#failed !== undefined) return
    const email = readKept(this.#target).leadEmail
    if (email === undefined) this.#openAsk("escalate")
    else await this.#escalate(email, undefined)
  }

  async #escalate(email: string, name: string | undefined) {
    const t = this.#t
    this.#setBusy(true)
    try {
      const conversationId = await this.#ensureConversation()
      const escalation = await escalate(this.#target, conversationId, email, name)
      const live = escalation.handoff != null && escalation.handoff.status !== "closed"
      this.#notice(live ? t.escalated : t.escalatedEmail(email))
      this.#emit("service-chat:escalated", { conversationId, ticket: escalation.ticket })
      // a hand-off to people (when the agent hands off): their answers arrive on the conversation's stream
      this.#applyHandoff(escalation.handoff ?? null, false)
    } catch (error) {
      this.#notice(this.#errorText(error), true)
      this.#emit("service-chat:error", { phase: "escalate", message: error instanceof Error ? error.message : String(error) })
    } finally {
      this.#setBusy(false)
    }
  }

  /** A hand-off's state: while a person has the chat, their messages come over the conversation's event stream. */
  #applyHandoff(handoff: Handoff | null, announce: boolean) {
    const status = handoff?.status
    const before = this.#handoff
    this.#handoff = status
    if (status === "requested" || status === "active") {
      if (announce && status === "active" && before !== "active") this.#notice(this.#t.handoffActive)
      this.#watch()
    } else if (status === "closed") {
      if (announce && before !== "closed" && before !== undefined) this.#notice(this.#t.handoffClosed)
      this.#watching?.abort()
      this.#watching = undefined
    }
  }

  /** Follows the conversation's event stream (members' messages, hand-off changes), resuming with `Last-Event-ID`. */
  #watch() {
    if (this.#watching !== undefined || this.#conversationId === undefined) return
    const controller = new AbortController()
    this.#watching = controller
    const target = this.#target
    const conversationId = this.#conversationId
    void (async () => {
      let quiet = 0
      while (!controller.signal.aborted && quiet < maxReconnects) {
        let response: Response
        try {
          response = await conversationEvents(target, conversationId, readKept(target).eventsId, controller.signal)
        } catch {
          quiet++
          await sleep(Math.min(8000, 500 * 2 ** quiet))
          continue
        }
        // no such stream (an older service, an unknown conversation): nothing to follow
        if (!response.ok) break
        for await (const event of readEvents(response)) {
          quiet = 0
          if (event.id !== undefined) writeKept(target, { eventsId: event.id })
          const data = event.data
          if (data?.type === "message" && data.message?.role === "member") {
            if (this.#log.querySelector(`[data-message-id="${CSS.escape(String(data.message.id))}"]`) === null) {
              this.#plain("member", String(data.message.content ?? ""), String(data.message.id))
              this.#emit("service-chat:member-message", { message: data.message })
            }
          } else if (data?.type === "handoff") this.#applyHandoff(data.handoff ?? null, true)
          if (controller.signal.aborted) return
        }
        quiet++
        await sleep(Math.min(8000, 250 * 2 ** quiet))
      }
      if (this.#watching === controller) this.#watching = undefined
    })()
  }
}

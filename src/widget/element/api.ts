/**
 * The widget calls the component makes (`/widget/v1/agents/{agent_id}/...`,
 * with the widget key as a bearer token), the event streams read with fetch
 * (an EventSource can neither POST nor send the key), and what is kept in the
 * browser's storage per agent: the conversation id, the lead's e-mail, and the
 * reply still streaming (so a reload resumes it).
 */

export interface ChatConfig {
  readonly agent_id: string
  readonly name: string
  readonly welcome_message: string | null
  readonly color: string | null
  readonly launcher_position: "bottom-right" | "bottom-left"
  readonly lead_capture: "off" | "before_first_message" | "on_escalation"
  readonly handoff: boolean
}

export interface Source {
  readonly type: string
  readonly id: string
  readonly title: string
  readonly url: string | null
}

export interface Feedback {
  readonly rating: "up" | "down" | null
}

export interface ChatMessage {
  readonly id: string
  readonly role: "user" | "assistant" | "member"
  readonly content: string
  readonly sources: ReadonlyArray<Source>
  readonly feedback?: Feedback | null
}

export interface Handoff {
  readonly status: "requested" | "active" | "closed"
}

export interface ChatConversation {
  readonly id: string
  readonly status: "open" | "ended"
  readonly lead_id: string | null
  readonly messages: ReadonlyArray<ChatMessage>
  readonly handoff?: Handoff | null
}

/** A non-2xx answer: the status, the error's `code`, its message and `Retry-After` in seconds. */
export class ChatError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly retryAfter: number | undefined
  ) {
    super(message)
    this.name = "ChatError"
  }
}

/** No readable answer: offline, or refused without CORS headers (an origin the agent does not allow). */
export class ChatNetworkError extends Error {
  override readonly name = "ChatNetworkError"
}

const suffix = "/storage/v1/object/public/widget/v1/"

/** The service's base URL: where this module was served from, minus the storage path. */
export const defaultBaseUrl = (): string => {
  const here = new URL(import.meta.url)
  const at = here.pathname.indexOf(suffix)
  return here.origin + (at > 0 ? here.pathname.slice(0, at) : "")
}

export interface Target {
  readonly base: string
  readonly apiKey: string
  readonly agentId: string
}

const pathOf = (t: Target, rest: string) => `${t.base}/widget/v1/agents/${encodeURIComponent(t.agentId)}${rest}`

/** One call; rejects with ChatError (an answer that is not 2xx) or ChatNetworkError. */
export const call = async (
  t: Target,
  method: string,
  rest: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<Response> => {
  const init: RequestInit = {
    method,
    mode: "cors",
    credentials: "omit",
    headers: {
      authorization: `Bearer ${t.apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }
  let response: Response
  try {
    response = await fetch(pathOf(t, rest), init)
  } catch (cause) {
    throw new ChatNetworkError(String(cause))
  }
  if (!response.ok) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API, read by the component
    let parsed: any = undefined
    try {
      parsed = await response.json()
    } catch {
      // not JSON: the status says enough
    }
    const retry = Number(response.headers.get("retry-after"))
    throw new ChatError(
      response.status,
      typeof parsed?.error?.code === "string" ? parsed.error.code : undefined,
      typeof parsed?.error?.message === "string" ? parsed.error.message : `HTTP ${response.status}`,
      Number.isFinite(retry) && retry > 0 ? retry : undefined
    )
  }
  return response
}

const data = async <A>(response: Response): Promise<A> => ((await response.json()) as { data: A }).data

export const getConfig = (t: Target) => call(t, "GET", "/config").then((r) => data<ChatConfig>(r))
export const openConversation = (t: Target, metadata: Record<string, unknown>) =>
  call(t, "POST", "/conversations", { metadata }).then((r) => data<ChatConversation>(r))
export const getConversation = (t: Target, id: string) =>
  call(t, "GET", `/conversations/${encodeURIComponent(id)}`).then((r) => data<ChatConversation>(r))
export const sendMessage = (t: Target, id: string, message: string, locale: string) =>
  call(t, "POST", `/conversations/${encodeURIComponent(id)}/messages`, { message, locale })
export const resumeMessage = (t: Target, id: string, messageId: string, lastEventId: string | undefined) =>
  call(
    t,
    "GET",
    `/conversations/${encodeURIComponent(id)}/messages/${encodeURIComponent(messageId)}/stream`,
    undefined,
    lastEventId === undefined ? {} : { "last-event-id": lastEventId }
  )
export const conversationEvents = (t: Target, id: string, lastEventId: string | undefined, signal: AbortSignal) =>
  fetch(pathOf(t, `/conversations/${encodeURIComponent(id)}/events`), {
    mode: "cors",
    credentials: "omit",
    signal,
    headers: { authorization: `Bearer ${t.apiKey}`, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) }
  })
export const escalate = (t: Target, id: string, visitorEmail: string, visitorName: string | undefined) =>
  call(t, "POST", `/conversations/${encodeURIComponent(id)}/escalate`, {
    visitor_email: visitorEmail,
    ...(visitorName ? { visitor_name: visitorName } : {})
  }).then((r) => data<{ ticket: { public_id?: string }; handoff?: Handoff | null }>(r))
export const captureLead = (t: Target, email: string, name: string | undefined, conversationId: string | undefined) =>
  call(t, "POST", "/leads", {
    email,
    ...(name ? { name } : {}),
    ...(conversationId === undefined ? {} : { conversation_id: conversationId })
  })
export const rate = (t: Target, id: string, messageId: string, rating: "up" | "down" | null) =>
  call(t, "POST", `/conversations/${encodeURIComponent(id)}/messages/${encodeURIComponent(messageId)}/feedback`, { rating })

export interface StreamEvent {
  readonly id: string | undefined
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API, read by the component
  readonly data: any
}

/**
 * The events of a `text/event-stream` body as they arrive: `id:`/`data:`
 * lines up to a blank line, comments (`: ping`) skipped. Ends when the body
 * ends, however it ends (a dropped connection ends it early; the caller tells
 * by the missing terminal event).
 */
export async function* readEvents(response: Response): AsyncGenerator<StreamEvent> {
  const body = response.body
  if (body === null) return
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let id: string | undefined
  let lines: Array<string> = []
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch {
        return
      }
      if (chunk.done) return
      buffer += decoder.decode(chunk.value, { stream: true })
      let at: number
      while ((at = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, at)
        buffer = buffer.slice(at + (buffer.startsWith("\r\n", at) ? 2 : 1))
        if (line === "") {
          if (lines.length > 0) {
            let parsed: unknown
            try {
              parsed = JSON.parse(lines.join("\n"))
            } catch {
              parsed = undefined
            }
            if (parsed !== undefined) yield { id, data: parsed }
          }
          id = undefined
          lines = []
        } else if (line.startsWith("data:")) lines.push(line.slice(5).replace(/^ /, ""))
        else if (line.startsWith("id:")) id = line.slice(3).trim()
      }
    }
  } finally {
    reader.releaseLock()
  }
}

/** What is kept per agent (and service) in localStorage. */
export interface Kept {
  conversationId?: string | undefined
  leadEmail?: string | undefined
  /** The reply streaming when the page went away, and the last event of it seen. */
  pending?: { messageId: string; lastEventId: string | undefined } | undefined
  /** The last event of the conversation's own stream seen (hand-off). */
  eventsId?: string | undefined
}

const storage = (): Storage | undefined => {
  try {
    return window.localStorage
  } catch {
    return undefined
  }
}

const keyOf = (t: Target) => `service-chat:${t.base}:${t.agentId}`

export const readKept = (t: Target): Kept => {
  try {
    const raw = storage()?.getItem(keyOf(t))
    const parsed = raw == null ? {} : JSON.parse(raw)
    return typeof parsed === "object" && parsed !== null ? (parsed as Kept) : {}
  } catch {
    return {}
  }
}

export const writeKept = (t: Target, change: Partial<Kept>): Kept => {
  const next = { ...readKept(t), ...change }
  try {
    storage()?.setItem(keyOf(t), JSON.stringify(next))
  } catch {
    // storage refused (privacy mode, quota): the conversation lasts as long as the page
  }
  return next
}

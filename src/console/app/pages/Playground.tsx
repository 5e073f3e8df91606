/** The playground: chat with an agent, its reply streamed token by token, with the sources it drew on. */
import type { MessageSource } from "../../../../schema/Conversations.js"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Client, readEvents } from "../api.js"
import { ErrorBox, Field, messageOf } from "../ui.js"
import { AgentHeader } from "./Agents.js"

interface Turn {
  readonly id: number
  readonly role: "user" | "assistant"
  content: string
  sources: ReadonlyArray<MessageSource>
  escalation?: string
  error?: string
  done: boolean
}

export const PlaygroundPage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const [turns, setTurns] = useState<ReadonlyArray<Turn>>([])
  const [message, setMessage] = useState("")
  const [conversationId, setConversationId] = useState<string | undefined>(undefined)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const abort = useRef<AbortController | undefined>(undefined)
  const log = useRef<HTMLOListElement>(null)

  useEffect(() => () => abort.current?.abort(), [])
  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView?.({ block: "nearest" })
  }, [turns])

  const send = async (e: Event) => {
    e.preventDefault()
    const text = message.trim()
    if (text === "" || pending) return
    setMessage("")
    setError(undefined)
    setPending(true)
    const reply: Turn = { id: Date.now(), role: "assistant", content: "", sources: [], done: false }
    setTurns((list) => [...list, { id: reply.id - 1, role: "user", content: text, sources: [], done: true }, reply])
    const update = () => setTurns((list) => list.map((t) => (t.id === reply.id ? { ...reply } : t)))
    abort.current = new AbortController()
    const signal = abort.current.signal
    // what a resume needs: the reply's place and the last event drawn
    let resumeFrom: { conversation: string; message: string } | undefined
    let lastId: string | undefined
    let ended = false
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an SSE event's JSON
    const onEvent = (event: any, id: string | undefined) => {
      if (id !== undefined) lastId = id
      switch (event.type) {
        case "conversation":
          setConversationId(event.conversation_id)
          resumeFrom = { conversation: event.conversation_id, message: event.message_id }
          break
        case "token":
          reply.content += event.content
          break
        case "sources":
          reply.sources = event.sources
          break
        case "escalation":
          reply.escalation = event.message
          break
        case "error":
          reply.error = event.message
          ended = true
          break
        case "done":
          reply.done = true
          ended = true
          break
      }
      update()
    }
    try {
      const response = await client.fetch("POST", `/v1/agents/${agentId}/messages`, {
        body: { message: text, stream: true, ...(conversationId === undefined ? {} : { conversation_id: conversationId }) },
        headers: { accept: "text/event-stream" },
        signal
      })
      let dropped: unknown = undefined
      try {
        await readEvents(response.body!, onEvent)
      } catch (failure) {
        if ((failure as Error)?.name === "AbortError" && signal.aborted) throw failure
        dropped = failure
      }
      // the connection dropped before the reply ended: resume after the last event received
      for (let attempt = 0; !ended && !signal.aborted; attempt++) {
        if (resumeFrom === undefined || attempt >= 3) throw dropped ?? new Error("The reply's connection dropped.")
        try {
          const resumed = await client.fetch(
            "GET",
            `/v1/conversations/${resumeFrom.conversation}/messages/${resumeFrom.message}/stream`,
            { headers: { accept: "text/event-stream", ...(lastId === undefined ? {} : { "last-event-id": lastId }) }, signal }
          )
          await readEvents(resumed.body!, onEvent)
        } catch (failure) {
          if ((failure as Error)?.name === "AbortError" && signal.aborted) throw failure
          dropped = failure
        }
      }
    } catch (failure) {
      if ((failure as Error)?.name !== "AbortError") {
        reply.error = messageOf(failure)
        setError(failure)
      }
    } finally {
      reply.done = true
      update()
      setPending(false)
    }
  }

  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="playground" />
      <p class="muted">
        Messages go to <code>POST /v1/agents/{agentId}/messages</code> with this environment's key.
        {conversationId === undefined ? "" : ` Conversation ${conversationId}.`}
      </p>
      <ol class="chat" ref={log} aria-label="Conversation">
        {turns.length === 0 ? <li class="empty">Ask the agent something its knowledge covers.</li> : null}
        {turns.map((turn) => (
          <li key={turn.id} class={`turn turn-${turn.role}`}>
            <span class="who">{turn.role === "user" ? "You" : "Agent"}</span>
            <div class="bubble" aria-busy={!turn.done}>
              {turn.content === "" && !turn.done ? <span class="typing">…</span> : turn.content}
            </div>
            {turn.escalation === undefined ? null : <p class="escalation">{turn.escalation}</p>}
            {turn.error === undefined ? null : (
              <p class="source-error" role="alert">
                {turn.error}
              </p>
            )}
            {turn.sources.length === 0 ? null : (
              <div class="reply-sources">
                <span>Sources:</span>
                <ul>
                  {turn.sources.map((s) => (
                    <li key={`${s.type}:${s.id}`}>
                      {s.url === null ? s.title : <a href={s.url} rel="noreferrer noopener" target="_blank">{s.title}</a>}{" "}
                      <span class="muted">({s.type === "qa" ? "Q&A" : "passage"})</span>
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </li>
        ))}
      </ol>
      <p class="sr-only" role="status">
        {pending ? "The agent is replying" : turns.length > 0 ? "Reply complete" : ""}
      </p>
      <form
        class="card chat-form"
        onSubmit={send}
        onKeyDown={(e) => {
          // Enter sends, Shift+Enter starts a new line
          if (e.key === "Enter" && !e.shiftKey && (e.target as HTMLElement).tagName === "TEXTAREA") {
            e.preventDefault()
            ;(e.currentTarget as HTMLFormElement).requestSubmit()
          }
        }}
      >
        <Field
          label="Message"
          value={message}
          onInput={setMessage}
          multiline={2}
          required
          name="message"
          hint="Enter sends; Shift+Enter starts a new line."
        />
        <button type="submit" class="primary" disabled={pending}>
          {pending ? "Replying…" : "Send"}
        </button>
        <button
          type="button"
          onClick={() => {
            abort.current?.abort()
            setTurns([])
            setConversationId(undefined)
          }}
        >
          New conversation
        </button>
      </form>
      {error === undefined ? null : <ErrorBox error={error} />}
    </section>
  )
}

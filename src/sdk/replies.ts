/**
 * Streaming replies for integrators: the events of one reply, typed, as an
 * async iterator that resumes by itself when the connection drops.
 *
 *   for await (const event of streamReply({ baseUrl, apiKey, agentId, message: "Hi" })) {
 *     if (event.type === "token") process.stdout.write(event.content)
 *   }
 *
 * A drop before the reply's end (network error, or the body ending without a
 * `done` or `error` event) is followed by
 * `GET /v1/conversations/{id}/messages/{message_id}/stream` with the last
 * `Last-Event-ID`, up to `maxResumes` times: the caller sees every event once,
 * in order. A refusal before the stream starts throws `ReplyRequestError`
 * with the error envelope's `status`, `code` and `message`.
 */
import * as Schema from "effect/Schema"
import { makeParser } from "../../layers/ai/Sse.js"
import { StreamEvent } from "../../schema/Conversations.js"

export type { StreamEvent } from "../../schema/Conversations.js"

export class ReplyRequestError extends Error {
  override readonly name = "ReplyRequestError"
  constructor(
    readonly status: number,
    readonly code: string,
    message: string
  ) {
    super(message)
  }
}

export interface StreamReplyOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly agentId: string
  readonly message: string
  readonly conversationId?: string
  /** The visitor's language (`es`, `en-GB`): the fallback and the escalation offer are in it when the question's cannot be told. */
  readonly locale?: string
  /** Resumes after drops, at most this many times (default 5). */
  readonly maxResumes?: number
  /** Pause before each resume, in milliseconds (default 500, doubled each time). */
  readonly resumeDelayMillis?: number
  /** Another `fetch` (a proxy-aware one, or a test's). */
  readonly fetch?: typeof globalThis.fetch
  readonly signal?: AbortSignal
}

const decode = Schema.decodeUnknownSync(Schema.parseJson(StreamEvent))

const refusal = async (response: Response): Promise<ReplyRequestError> => {
  const text = await response.text().catch(() => "")
  try {
    const body = JSON.parse(text)
    return new ReplyRequestError(response.status, String(body?.error?.code ?? "unknown"), String(body?.error?.message ?? text))
  } catch {
    return new ReplyRequestError(response.status, "unknown", text.slice(0, 300))
  }
}

export async function* streamReply(options: StreamReplyOptions): AsyncGenerator<StreamEvent, void, undefined> {
  const fetcher = options.fetch ?? globalThis.fetch
  const base = options.baseUrl.replace(/\/+$/, "")
  const headers = { authorization: `Bearer ${options.apiKey}`, accept: "text/event-stream" }
  const maxResumes = options.maxResumes ?? 5
  let delay = options.resumeDelayMillis ?? 500
  let lastId = 0
  let conversationId: string | undefined
  let messageId: string | undefined

  const open = (): Promise<Response> =>
    messageId === undefined || conversationId === undefined
      ? fetcher(`${base}/v1/agents/${encodeURIComponent(options.agentId)}/messages`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({
            message: options.message,
            stream: true,
            ...(options.conversationId === undefined ? {} : { conversation_id: options.conversationId }),
            ...(options.locale === undefined ? {} : { locale: options.locale })
          }),
          ...(options.signal === undefined ? {} : { signal: options.signal })
        })
      : fetcher(`${base}/v1/conversations/${conversationId}/messages/${messageId}/stream`, {
          headers: { ...headers, "last-event-id": String(lastId) },
          ...(options.signal === undefined ? {} : { signal: options.signal })
        })

  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined
    try {
      response = await open()
      if (response.status !== 200 || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        throw await refusal(response)
      }
      const parser = makeParser()
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { done, value } = await reader.read()
        const messages = done ? parser.end() : parser.feed(value)
        for (const message of messages) {
          const id = Number(message.id)
          // an event seen before a drop is never yielded twice
          if (Number.isInteger(id) && id <= lastId) continue
          if (Number.isInteger(id)) lastId = id
          const event = decode(message.data)
          if (event.type === "conversation") {
            conversationId = event.conversation_id
            messageId = event.message_id
          }
          yield event
          if (event.type === "done" || event.type === "error") {
            await reader.cancel().catch(() => undefined)
            return
          }
        }
        if (done) break
      }
    } catch (error) {
      if (error instanceof ReplyRequestError || options.signal?.aborted) throw error
      // a network failure: resumable once the reply's id is known
    }
    if (messageId === undefined || attempt >= maxResumes) {
      throw new ReplyRequestError(0, "connection_lost", "The reply's stream ended before its last event and could not be resumed")
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
    delay *= 2
  }
}

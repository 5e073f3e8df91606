/**
 * Helpers of the conversation tests: agents with Q&A to answer from, event
 * streams read over real HTTP by an independent parser (`eventsource-parser`),
 * what a test waits on while a stream is open, and a test model whose tokens
 * the test releases one by one.
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { createParser } from "eventsource-parser"
import * as Ai from "../../layers/Ai.js"
import { openStreams } from "../../src/http/Metrics.js"
import { eventually } from "../support/eventually.js"
import type { HarnessShape } from "../support/harness.js"

export const createAgent = (h: HarnessShape, key: string, instructions?: string) =>
  Effect.map(
    h.call("POST", "/v1/agents", {
      key,
      body: { type: "support", name: "Reply bot", ...(instructions === undefined ? {} : { instructions }) }
    }),
    (r) => r.body.data.id as string
  )

export const addQa = (h: HarnessShape, key: string, agentId: string, question: string, answer: string) =>
  Effect.map(h.call("POST", `/v1/agents/${agentId}/qa`, { key, body: { question, answer } }), (r) => r.body.data.id as string)

/** An agent that knows about delivery, returns and passwords. */
export const knowledgeableAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    const delivery = yield* addQa(
      h,
      key,
      agentId,
      "How long does delivery take?",
      "Orders arrive within five business days anywhere in Europe, and tracking is e-mailed when the parcel leaves."
    )
    yield* addQa(h, key, agentId, "Can I return an item?", "You can send any item back within 30 days for a full refund.")
    yield* addQa(h, key, agentId, "How do I reset my password?", "Use the link on the sign-in page to choose a new password.")
    return { agentId, deliveryQa: delivery }
  })

export interface SseEvent {
  readonly id: string | undefined
  readonly data: any
}

export interface SseReply {
  readonly status: number
  readonly headers: Headers
  readonly events: ReadonlyArray<SseEvent>
  readonly comments: ReadonlyArray<string>
  /** The body when it was not an event stream (an error envelope). */
  readonly body: any
}

export interface SseOptions {
  readonly key: string
  readonly method?: "GET" | "POST"
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Drops the connection once this holds for the events read so far. */
  readonly stopWhen?: (events: ReadonlyArray<SseEvent>) => boolean
  /** Filled as the stream is read, for a test to wait on while it is open. */
  readonly soFar?: SoFar
}

/** What a reader has received so far. */
export interface SoFar {
  readonly events: Array<SseEvent>
  readonly comments: Array<string>
}

export const soFar = (): SoFar => ({ events: [], comments: [] })

/** Waits until the reader has received `n` events. */
export const received = (so: SoFar, n: number, label: string) =>
  eventually(Effect.sync(() => so.events.length), (got) => got >= n, { label })

/** Reads an event stream to its end (or until `stopWhen`), with `eventsource-parser`. */
export const sse = (h: HarnessShape, path: string, options: SseOptions) =>
  Effect.promise(async (): Promise<SseReply> => {
    const abort = new AbortController()
    const headers: Record<string, string> = { authorization: `Bearer ${options.key}`, ...options.headers }
    if (options.body !== undefined) headers["content-type"] = "application/json"
    const response = await fetch(`${h.url}${path}`, {
      method: options.method ?? (options.body === undefined ? "GET" : "POST"),
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: abort.signal
    })
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const text = await response.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON: kept as text
      }
      return { status: response.status, headers: response.headers, events: [], comments: [], body }
    }
    const events: Array<SseEvent> = []
    const comments: Array<string> = []
    let stopped = false
    const parser = createParser({
      onEvent: (event) => {
        if (stopped) return
        events.push({ id: event.id, data: JSON.parse(event.data) })
        options.soFar?.events.push(events[events.length - 1]!)
        if (options.stopWhen?.(events)) stopped = true
      },
      onComment: (comment) => {
        comments.push(comment)
        options.soFar?.comments.push(comment)
      }
    })
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    while (!stopped) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(value)
    }
    if (stopped) abort.abort()
    return { status: response.status, headers: response.headers, events, comments, body: null }
  })

export const types = (events: ReadonlyArray<SseEvent>) => events.map((e) => e.data.type as string)

export const text = (events: ReadonlyArray<SseEvent>) =>
  events.filter((e) => e.data.type === "token").map((e) => e.data.content as string).join("")

/** Event streams the server has open (`sse_open_streams`: from a stream's first pull to its end, a client gone too). */
export const openStreamCount = Effect.map(Metric.value(openStreams), (gauge) => gauge.value)

/**
 * How many sleeps on the TestClock end `millis` from now. The server's own waits show there: a reader waiting for
 * its next frame has a ping due (`pingInterval`), a reply without a reader its grace timer. A sleep stays listed
 * until the clock passes it, even when its fiber was interrupted.
 */
export const sleepsEnding = (millis: number) =>
  Effect.zipWith(Clock.currentTimeMillis, TestClock.sleeps(), (now, deadlines) =>
    Chunk.size(Chunk.filter(deadlines, (at) => at === now + millis))
  )

/** Offered to the gated model: it fails there, as a provider that broke off (transient). */
export const failHere = "\u0000fail"

/**
 * A model that answers with the tokens the test offers (`null` closes the
 * answer, `failHere` fails it) and records whether generation was interrupted
 * while it waited, and the inputs it was asked.
 */
export const gatedModel = () => {
  const tokens = Effect.runSync(Queue.unbounded<string | null>())
  const record = { interrupted: 0, started: 0, inputs: [] as Array<Ai.AnswerInput> }
  const layer = Layer.sync(Ai.Ai, () => ({
    ...Ai.makeLocal(),
    answer: (input: Ai.AnswerInput) =>
      Stream.repeatEffectOption(
        Queue.take(tokens).pipe(
          Effect.onInterrupt(() => Effect.sync(() => record.interrupted++)),
          Effect.flatMap((t) =>
            t === null
              ? Effect.fail(Option.none())
              : t === failHere
                ? Effect.fail(Option.some(new Ai.AiError({ message: "the provider broke off", transient: true })))
                : Effect.succeed(t)
          )
        )
      ).pipe(Stream.onStart(Effect.sync(() => {
        record.started++
        record.inputs.push(input)
      })))
  }))
  return {
    layer,
    record,
    offer: (...pieces: ReadonlyArray<string | null>) => Queue.offerAll(tokens, pieces)
  }
}

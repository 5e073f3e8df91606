/**
 * OpenAI's chat completions answered by an agent: the request read into a message of a conversation (the last
 * `user` message the question, the earlier turns its history, `system` messages instructions for this reply),
 * sent through `Conversations.send` (so caps, credits, events and insights are the messages endpoint's), and
 * the reply's events written as a `chat.completion` or as `chat.completion.chunk` events.
 *
 * The stream is written from the reply's events as they come: a token's event holds its text as a JSON string
 * already, which goes into its chunk as it is, so a chunk costs a string join and no parse.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { Agent } from "../../schema/Agents.js"
import type { ChatCompletionRequest, ChatMessage } from "../../schema/Completions.js"
import { maxCompletionMessages, maxSystemChars } from "../../schema/Completions.js"
import { maxMessageChars, type MessageSource, type StreamEvent } from "../../schema/Conversations.js"
import { AiUnavailable, ModelNotFound, ParameterInvalid, ServiceUnavailable } from "../../schema/Errors.js"
import type { ConversationId, MessageId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Agents } from "../agents/Agents.js"
import { Conversations } from "../conversations/Conversations.js"
import type { Turn } from "../conversations/Replies.js"
import type { Numbered } from "../conversations/ReplyLog.js"

/** A request read: what `Conversations.send` takes, and how the answer is written. */
export interface ReadRequest {
  readonly question: string
  readonly history: ReadonlyArray<Turn>
  readonly instructions: string | undefined
  readonly maxTokens: number | undefined
  readonly stream: boolean
  readonly includeUsage: boolean
}

/** How one reply is written: its ids, and the time and model every chunk repeats. */
export interface Shape {
  readonly conversationId: ConversationId
  readonly messageId: MessageId
  readonly model: string
  readonly created: number
  readonly includeUsage: boolean
  readonly maxTokens: number | undefined
}

const invalid = (message: string, param: string) => new ParameterInvalid({ message, param })

const textOf = (message: ChatMessage, index: number): Effect.Effect<string, ParameterInvalid> => {
  const content = message.content
  if (content === undefined || content === null) return Effect.succeed("")
  if (typeof content === "string") return Effect.succeed(content)
  const parts: Array<string> = []
  for (const [i, part] of content.entries()) {
    if (part.type !== "text") {
      return Effect.fail(invalid(`Only text content is read; messages[${index}].content[${i}] is \`${part.type}\``, `messages[${index}].content[${i}].type`))
    }
    parts.push(part.text ?? "")
  }
  return Effect.succeed(parts.join("\n"))
}

/** The request read, or the `400` naming what it asks that this service does not do. */
export const readRequest = (body: ChatCompletionRequest): Effect.Effect<ReadRequest, ParameterInvalid> =>
  Effect.gen(function* () {
    if (body.n !== undefined && body.n !== null && body.n !== 1) {
      return yield* invalid("`n` must be 1: an agent gives one reply", "n")
    }
    if (body.tools !== undefined && body.tools !== null && !(Array.isArray(body.tools) && body.tools.length === 0)) {
      return yield* invalid("`tools` is not supported: an agent answers from its knowledge and calls no tools", "tools")
    }
    const format = body.response_format
    if (format !== undefined && format !== null && (typeof format !== "object" || (format as { type?: unknown }).type !== "text")) {
      return yield* invalid("`response_format` must be `{ \"type\": \"text\" }`: the reply is text", "response_format")
    }
    if (body.messages.length === 0) return yield* invalid("`messages` must hold the question, a `user` message", "messages")
    if (body.messages.length > maxCompletionMessages) {
      return yield* invalid(`\`messages\` holds at most ${maxCompletionMessages} messages`, "messages")
    }
    const last = body.messages.length - 1
    if (body.messages[last]!.role !== "user") {
      return yield* invalid("The last of `messages` must be the question, a `user` message", `messages[${last}].role`)
    }
    const system: Array<string> = []
    const history: Array<Turn> = []
    let question = ""
    for (const [i, message] of body.messages.entries()) {
      const text = yield* textOf(message, i)
      switch (message.role) {
        case "system":
        case "developer":
          if (text.trim() !== "") system.push(text.trim())
          break
        case "user":
        case "assistant":
          if (i === last) question = text.trim()
          else if (text.trim() !== "") history.push({ role: message.role, content: text })
          break
        default:
          return yield* invalid(`\`${message.role}\` messages are not supported: an agent calls no tools`, `messages[${i}].role`)
      }
    }
    if (question === "") return yield* invalid("The question (the last `user` message) must not be empty", `messages[${last}].content`)
    if (question.length > maxMessageChars) {
      return yield* invalid(`The question (the last \`user\` message) must be at most ${maxMessageChars} characters`, `messages[${last}].content`)
    }
    const instructions = system.join("\n\n")
    if (instructions.length > maxSystemChars) {
      return yield* invalid(`The \`system\` messages must be at most ${maxSystemChars} characters together`, "messages")
    }
    const caps = [body.max_tokens, body.max_completion_tokens].filter((n): n is number => typeof n === "number")
    return {
      question,
      history,
      instructions: instructions === "" ? undefined : instructions,
      maxTokens: caps.length === 0 ? undefined : Math.min(...caps),
      stream: body.stream === true,
      includeUsage: body.stream_options?.include_usage === true
    }
  })

const citations = (sources: ReadonlyArray<MessageSource>, length: number) =>
  sources
    .filter((s) => s.url !== null)
    .map((s) => ({ type: "url_citation" as const, url_citation: { url: s.url!, title: s.title, start_index: 0, end_index: length } }))

type Done = Extract<StreamEvent, { type: "done" }>

const finishReason = (shape: Shape, done: Done) =>
  shape.maxTokens !== undefined && done.usage.output_tokens >= shape.maxTokens ? "length" : "stop"

const usageOf = (done: Done) => ({
  prompt_tokens: done.usage.input_tokens,
  completion_tokens: done.usage.output_tokens,
  total_tokens: done.usage.input_tokens + done.usage.output_tokens
})

const tokenPrefix = '{"type":"token","content":'

/** A reply's failure as the non-streamed answer's error, as the messages endpoint answers it. */
const failureOf = (event: StreamEvent | undefined) => {
  if (event?.type === "error" && event.code === AiUnavailable.code) return new AiUnavailable({ message: event.message })
  return new ServiceUnavailable({ message: event?.type === "error" ? event.message : "The reply ended without a result" })
}

/** The reply's events as `chat.completion.chunk` frames, `[DONE]` at the end (an `error` frame instead when it fails). */
export const chunks = (shape: Shape, events: Stream.Stream<Numbered>): Stream.Stream<string> => {
  const head = `{"id":"chatcmpl-${shape.messageId}","object":"chat.completion.chunk","created":${shape.created},"model":${JSON.stringify(shape.model)},"choices":`
  const tokenOpen = `data: ${head}[{"index":0,"delta":{"content":`
  const tokenClose = '},"finish_reason":null,"logprobs":null}]}\n\n'
  // the pieces as JSON strings: the reply's length (its citations' end) is read from them once, at the end
  const pieces: Array<string> = []
  let sources: ReadonlyArray<MessageSource> = []
  let ended = false
  const write = (e: Numbered): ReadonlyArray<string> => {
    const data = e.data
    if (data.startsWith(tokenPrefix)) {
      const literal = data.slice(tokenPrefix.length, -1)
      pieces.push(literal)
      return [tokenOpen + literal + tokenClose]
    }
    const event = JSON.parse(data) as StreamEvent
    switch (event.type) {
      case "conversation":
        return [`data: ${head}[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]}\n\n`]
      case "token": {
        const literal = JSON.stringify(event.content)
        pieces.push(literal)
        return [tokenOpen + literal + tokenClose]
      }
      case "sources":
        sources = event.sources
        return []
      case "done": {
        ended = true
        const length = pieces.length === 0 ? 0 : (JSON.parse(`[${pieces.join(",")}]`) as Array<string>).reduce((n, p) => n + p.length, 0)
        const last = {
          index: 0,
          delta: { annotations: citations(sources, length) },
          finish_reason: finishReason(shape, event),
          logprobs: null
        }
        const extension = `,"conversation_id":"${shape.conversationId}","message_id":"${shape.messageId}","sources":${JSON.stringify(sources)}`
        const out = [`data: ${head}[${JSON.stringify(last)}]${extension}}\n\n`]
        if (shape.includeUsage) out.push(`data: ${head}[],"usage":${JSON.stringify(usageOf(event))}}\n\n`)
        out.push("data: [DONE]\n\n")
        return out
      }
      case "error":
        ended = true
        return [
          `data: ${JSON.stringify({ error: { type: "api_error", code: event.code, message: event.message, param: null } })}\n\n`
        ]
      default:
        // an escalation offer or a hand-off: the extension's `sources` and the stored conversation tell them
        return []
    }
  }
  return Stream.mapConcat(Stream.takeUntil(events, (e) => e.terminal), (e) => (ended ? [] : write(e)))
}

/** The reply's events gathered into a `chat.completion`, or its failure. */
export const completion = (shape: Shape, events: Stream.Stream<Numbered>) =>
  Effect.gen(function* () {
    let content = ""
    let sources: ReadonlyArray<MessageSource> = []
    let end: StreamEvent | undefined
    yield* Stream.runForEach(Stream.takeUntil(events, (e) => e.terminal), (e) =>
      Effect.sync(() => {
        const event = JSON.parse(e.data) as StreamEvent
        if (event.type === "token") content += event.content
        else if (event.type === "sources") sources = event.sources
        else if (event.type === "done" || event.type === "error") end = event
      })
    )
    if (end?.type !== "done") return yield* failureOf(end)
    return {
      id: `chatcmpl-${shape.messageId}`,
      object: "chat.completion" as const,
      created: shape.created,
      model: shape.model,
      choices: [
        {
          index: 0 as const,
          message: { role: "assistant" as const, content, refusal: null, annotations: citations(sources, content.length) },
          finish_reason: finishReason(shape, end),
          logprobs: null
        }
      ],
      usage: usageOf(end),
      conversation_id: shape.conversationId,
      message_id: shape.messageId,
      sources
    }
  })

/** An agent as a model. */
export const modelOf = (agent: Agent, tenant: Tenant) => ({
  id: agent.id,
  object: "model" as const,
  created: Math.floor(Date.parse(agent.created_at) / 1000),
  owned_by: tenant.workspaceId,
  name: agent.name,
  slug: agent.slug
})

/** Agents listed as models at most (pages of the agents' listing read). */
const maxModels = 1_000

export class Completions extends Effect.Service<Completions>()("Completions/Completions", {
  effect: Effect.gen(function* () {
    const agents = yield* Agents
    const conversations = yield* Conversations

    const modelNamed = (tenant: Tenant, model: string, param: string) =>
      Effect.flatMap(agents.resolve(tenant, model), (found) =>
        Option.match(found, {
          onNone: () =>
            Effect.fail(
              new ModelNotFound({ message: `No agent of this workspace has the id or slug '${model}'`, param })
            ),
          onSome: Effect.succeed
        })
      )

    /** Reads the request, sends its question, and gives how to write the answer with the reply's events. */
    const create = Effect.fn("Completions.create")(function* (
      tenant: Tenant,
      body: ChatCompletionRequest,
      conversationId: ConversationId | undefined
    ) {
      const read = yield* readRequest(body)
      const agent = yield* modelNamed(tenant, body.model, "model")
      // a continued conversation without turns in the request replies with its stored history
      const history = read.history.length === 0 && conversationId !== undefined ? undefined : read.history
      const sent = yield* conversations.send(tenant, "api", agent.id, {
        message: read.question,
        conversation_id: conversationId,
        history,
        instructions: read.instructions,
        maxTokens: read.maxTokens,
        agent
      })
      const shape: Shape = {
        conversationId: sent.conversationId,
        messageId: sent.messageId,
        model: agent.id,
        created: Math.floor(Date.parse(sent.userMessage.created_at) / 1000),
        includeUsage: read.includeUsage,
        maxTokens: read.maxTokens
      }
      return { read, shape, events: conversations.events(sent) }
    })

    /** A kept stream written again (an `Idempotency-Key`'s replay), from its first event, as the first request asked. */
    const replay = Effect.fn("Completions.replay")(function* (
      tenant: Tenant,
      conversationId: ConversationId,
      messageId: MessageId,
      body: ChatCompletionRequest
    ) {
      const read = yield* readRequest(body)
      const events = yield* conversations.resume(tenant, conversationId, messageId, undefined)
      const agent = yield* agents.resolve(tenant, body.model)
      const conversation = yield* conversations.retrieve(tenant, conversationId)
      const reply = conversation.messages.find((m) => m.id === messageId)
      const shape: Shape = {
        conversationId,
        messageId,
        model: Option.isSome(agent) ? agent.value.id : conversation.agent_id,
        created: Math.floor(Date.parse(reply?.created_at ?? conversation.started_at) / 1000),
        includeUsage: read.includeUsage,
        maxTokens: read.maxTokens
      }
      return chunks(shape, events)
    })

    const listModels = Effect.fn("Completions.listModels")(function* (tenant: Tenant) {
      const models: Array<ReturnType<typeof modelOf>> = []
      let after: string | undefined
      for (;;) {
        const page = yield* agents.list(tenant, { limit: "100", ...(after === undefined ? {} : { starting_after: after }) }).pipe(
          // the cursor is the listing's own
          Effect.orDie
        )
        models.push(...page.agents.map((a) => modelOf(a, tenant)))
        after = page.pagination.next_cursor ?? undefined
        if (after === undefined || models.length >= maxModels) return { object: "list" as const, data: models }
      }
    })

    const retrieveModel = Effect.fn("Completions.retrieveModel")(function* (tenant: Tenant, id: string) {
      return modelOf(yield* modelNamed(tenant, id, "model"), tenant)
    })

    return { create, replay, listModels, retrieveModel } as const
  })
}) {}

/**
 * The OpenAI-compatible surface: `POST /v1/chat/completions` (OpenAI's chat completion request and response,
 * plain or streamed as `chat.completion.chunk` events) answered by an agent, and `GET /v1/models` listing the
 * workspace's agents as models. Its errors keep the API's envelope, whose `error.message`, `error.type` and
 * `error.code` OpenAI's SDKs read.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { MessageSource, maxMessageChars } from "./Conversations.js"
import { StreamFormat } from "./Endpoint.js"
import { AiUnavailable, ApiError, LimitReached, ModelNotFound, ParameterInvalid, ResourceMissing, ServiceUnavailable } from "./Errors.js"
import { ConversationId, MessageId } from "./Ids.js"
import { reference } from "./Reference.js"

/** Longest `system` text a request adds to the agent's instructions, in characters. */
export const maxSystemChars = 8_000

/** Messages a request holds at most (its history included). */
export const maxCompletionMessages = 100

/** A part of a message's content: only text is read. */
export const ContentPart = Schema.Struct({
  type: Schema.String.annotations({ description: "`text`; any other kind of part is refused (`400`, naming it)" }),
  text: Schema.optional(Schema.String)
}).annotations({ identifier: "ChatContentPart" })

export const ChatMessage = Schema.Struct({
  role: Schema.Literal("system", "developer", "user", "assistant", "tool", "function").annotations({
    description:
      "`system` and `developer`: added to the agent's instructions for this call; `user` and `assistant`: the " +
      "conversation, the last `user` message being the question; `tool` and `function` are refused"
  }),
  content: Schema.optional(
    Schema.NullOr(Schema.Union(Schema.String, Schema.Array(ContentPart)))
  ).annotations({ description: "The text, or an array of `text` parts (joined)" }),
  name: Schema.optional(Schema.String)
}).annotations({ identifier: "ChatMessage" })
export type ChatMessage = typeof ChatMessage.Type

/**
 * OpenAI's request. Unknown fields are ignored, as OpenAI's SDKs send some of their own; the ones that would
 * change what the answer means are refused by the program, naming them.
 */
export const ChatCompletionRequest = Schema.Struct({
  model: Schema.String.annotations({ description: "An agent's id (`agt_…`) or slug, of this workspace and environment" }),
  messages: Schema.Array(ChatMessage).annotations({
    description: `The conversation, oldest first (at most ${maxCompletionMessages}); the last \`user\` message is the question`
  }),
  stream: Schema.optional(Schema.NullOr(Schema.Boolean)).annotations({
    description: "`true`: `chat.completion.chunk` events (`text/event-stream`), then `data: [DONE]`"
  }),
  stream_options: Schema.optional(
    Schema.NullOr(Schema.Struct({ include_usage: Schema.optional(Schema.NullOr(Schema.Boolean)) }))
  ).annotations({ description: "`include_usage: true`: a last chunk with `usage` and no choices, before `[DONE]`" }),
  max_tokens: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive()))).annotations({
    description: "A cap on the reply's tokens (its words and marks): past it the reply stops, `finish_reason: \"length\"`"
  }),
  max_completion_tokens: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive()))).annotations({
    description: "The same cap as `max_tokens` (the lower of the two counts)"
  }),
  n: Schema.optional(Schema.NullOr(Schema.Int)).annotations({ description: "1 (or absent): one choice; more is refused" }),
  temperature: Schema.optional(Schema.NullOr(Schema.Number)).annotations({ description: "Accepted and ignored: the agent's model settings hold" }),
  top_p: Schema.optional(Schema.NullOr(Schema.Number)).annotations({ description: "Accepted and ignored" }),
  user: Schema.optional(Schema.String).annotations({ description: "Accepted and ignored (conversations carry no end-user id)" }),
  tools: Schema.optional(Schema.Unknown).annotations({ description: "Refused: an agent answers from its knowledge and calls no tools" }),
  response_format: Schema.optional(Schema.Unknown).annotations({ description: "`{ \"type\": \"text\" }` (or absent); any other is refused" })
}).annotations({ identifier: "ChatCompletionRequest" })
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

export const UrlCitation = Schema.Struct({
  type: Schema.Literal("url_citation"),
  url_citation: Schema.Struct({
    url: Schema.String,
    title: Schema.String,
    start_index: Schema.Int,
    end_index: Schema.Int.annotations({ description: "The citation covers the whole reply: 0 to its length" })
  })
}).annotations({ identifier: "UrlCitation", description: "A source of the reply that has a URL (a `url` knowledge source)" })

export const CompletionUsage = Schema.Struct({
  prompt_tokens: Schema.Int.annotations({ description: "The question's and the knowledge drawn on's tokens, as the messages endpoint's `usage.input_tokens`" }),
  completion_tokens: Schema.Int.annotations({ description: "The reply's tokens (`usage.output_tokens`)" }),
  total_tokens: Schema.Int
}).annotations({ identifier: "CompletionUsage" })

/** What this service adds to OpenAI's shapes, on the completion (and on a stream's last choice chunk). */
const extension = {
  conversation_id: ConversationId.annotations({ description: "The conversation the reply is stored in (also the `Conversation-Id` header)" }),
  message_id: MessageId.annotations({ description: "The stored reply's id (also the `Message-Id` header)" }),
  sources: Schema.Array(MessageSource).annotations({ description: "What the reply drew on, as the messages endpoint gives them" })
}

export const ChatCompletion = Schema.Struct({
  id: Schema.String.annotations({ description: "`chatcmpl-` and the reply's message id" }),
  object: Schema.Literal("chat.completion"),
  created: Schema.Int.annotations({ description: "Unix time, in seconds" }),
  model: Schema.String.annotations({ description: "The agent's id" }),
  choices: Schema.Array(
    Schema.Struct({
      index: Schema.Literal(0),
      message: Schema.Struct({
        role: Schema.Literal("assistant"),
        content: Schema.String,
        refusal: Schema.Null,
        annotations: Schema.Array(UrlCitation)
      }),
      finish_reason: Schema.Literal("stop", "length"),
      logprobs: Schema.Null
    })
  ),
  usage: CompletionUsage,
  ...extension
}).annotations({ identifier: "ChatCompletion" })

const streamDescription =
  "With `stream: true`: `data: {chat.completion.chunk}` events (the first with `delta.role`, then `delta.content` " +
    "pieces, then one with `finish_reason`, `delta.annotations` and the extension's `sources`, `conversation_id` and " +
    "`message_id`; with `stream_options.include_usage`, one more with `usage` and no choices), then `data: [DONE]`. " +
    "A reply that fails ends with `data: {\"error\": {…}}` and no `[DONE]`"

export const CompletionStreamText = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: streamDescription
})

export const Model = Schema.Struct({
  id: Schema.String.annotations({ description: "The agent's id: what `model` names" }),
  object: Schema.Literal("model"),
  created: Schema.Int.annotations({ description: "When the agent was created, Unix time in seconds" }),
  owned_by: Schema.String.annotations({ description: "The workspace's id" }),
  name: Schema.String.annotations({ description: "The agent's name" }),
  slug: Schema.String.annotations({ description: "The agent's slug: `model` may name it too" })
}).annotations({ identifier: "Model" })

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Model)
}).annotations({ identifier: "ModelList" })

export const CompletionHeaders = Schema.Struct({
  "conversation-id": Schema.optional(ConversationId).annotations({
    description: "Continue this stored conversation of the agent (`cnv_…`); absent (or ended): a new one is opened"
  })
})

const modelPath = HttpApiSchema.param("model", Schema.String.annotations({ description: "An agent's id or slug" }))

/** The completion's `200`: the document shows both of its bodies (the platform merges one status's successes). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is edited as plain JSON
const bothBodies = (operation: Record<string, any>): Record<string, any> => {
  const ok = operation["responses"]?.["200"]
  if (ok === undefined) return operation
  ok.content = {
    "application/json": { schema: { $ref: "#/components/schemas/ChatCompletion" } },
    "text/event-stream": { schema: { type: "string", description: streamDescription } }
  }
  ok.headers = {
    ...ok.headers,
    "Conversation-Id": { description: "The conversation the reply is stored in: send it back to continue it", schema: { type: "string" } },
    "Message-Id": { description: "The reply's message id", schema: { type: "string" } }
  }
  return operation
}

export class CompletionsGroup extends HttpApiGroup.make("completions")
  .add(
    HttpApiEndpoint.post("create", "/v1/chat/completions")
      .setPayload(ChatCompletionRequest)
      .setHeaders(CompletionHeaders)
      .addSuccess(ChatCompletion)
      .addSuccess(CompletionStreamText)
      .addError(ApiError(ModelNotFound))
      .addError(ApiError(ResourceMissing))
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(LimitReached))
      .addError(ApiError(ServiceUnavailable))
      .addError(ApiError(AiUnavailable))
      .annotate(RequiredScope, "write:conversations")
      .annotate(StreamFormat, "completions")
      .annotate(OpenApi.Transform, bothBodies)
      .annotate(
        OpenApi.Description,
        "OpenAI's chat completion request: `model` an agent's id or slug, `messages` the conversation (the last `user` " +
          `message, at most ${maxMessageChars.toLocaleString("en")} characters, is the question; \`system\` messages add to the agent's ` +
          "instructions). Header `Conversation-Id` continues a stored conversation; the response's `Conversation-Id` " +
          "and `Message-Id` name the one used and the reply. `200` with a `chat.completion`, or with `stream: true` " +
          "`chat.completion.chunk` events"
      )
      .annotate(OpenApi.Summary, "OpenAI-compatible chat completion: an agent's reply, plain or streamed")
  )
  .add(
    HttpApiEndpoint.get("listModels", "/v1/models")
      .addSuccess(ModelList)
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Description, "The workspace's agents (of the key's environment) as OpenAI models, newest first")
      .annotate(OpenApi.Summary, "List the agents as OpenAI-compatible models")
  )
  .add(
    HttpApiEndpoint.get("retrieveModel")`/v1/models/${modelPath}`
      .addSuccess(Model)
      .addError(ApiError(ModelNotFound))
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Description, "An agent, by id or slug, as an OpenAI model")
      .annotate(OpenApi.Summary, "An agent as an OpenAI-compatible model")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("completions", { maxSystemChars, maxCompletionMessages, maxMessageChars }))
  .annotate(OpenApi.Title, "OpenAI-compatible chat") {}

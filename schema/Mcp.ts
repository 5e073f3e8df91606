/**
 * The Model Context Protocol endpoint: one operation, `POST /v1/mcp`, whose body is a JSON-RPC 2.0 message (or a
 * batch) of the protocol's streamable HTTP transport, and the arguments of the tools it serves, made of the
 * contract's own schemas so a tool takes what its REST twin takes.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication } from "./Auth.js"
import { SendMessage } from "./Conversations.js"
import { ApiError, ParameterInvalid, PayloadTooLarge, UnsupportedMediaType } from "./Errors.js"
import { AgentId } from "./Ids.js"
import { SearchKnowledge } from "./Knowledge.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"
import { CreateTicket, TicketPublicId } from "./Tickets.js"

/** The protocol the endpoint speaks, for the document's pointer. */
export const protocolUrl = "https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http"

const JsonRpcId = Schema.Union(Schema.String, Schema.Int).annotations({ description: "The request's id, echoed in its response" })

/** A request (with `id`) or a notification (without). */
export const JsonRpcRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(JsonRpcId),
  method: Schema.String.annotations({ description: "`initialize`, `ping`, `tools/list`, `tools/call`, `resources/list`, …" }),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "JsonRpcRequest" })
export type JsonRpcRequest = typeof JsonRpcRequest.Type

/** A client's answer to a server request: this server sends none, so it is acknowledged and dropped. */
export const JsonRpcClientResponse = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(JsonRpcId),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "JsonRpcClientResponse" })

export const JsonRpcMessage = Schema.Union(JsonRpcRequest, JsonRpcClientResponse)
export type JsonRpcMessage = typeof JsonRpcMessage.Type

export const McpBody = Schema.Union(
  JsonRpcMessage,
  Schema.NonEmptyArray(JsonRpcMessage).annotations({ description: "A JSON-RPC batch" })
).annotations({ identifier: "McpBody" })
export type McpBody = typeof McpBody.Type

const JsonRpcError = Schema.Struct({
  code: Schema.Int.annotations({ description: "-32700, -32600, -32601, -32602 or -32603, as JSON-RPC 2.0 defines them" }),
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
})

export const JsonRpcResponse = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(JsonRpcId),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(JsonRpcError)
}).annotations({ identifier: "JsonRpcResponse" })

// the tools' arguments

export const SearchKnowledgeArguments = StrictStruct({
  agent: AgentId.annotations({ description: "The agent whose knowledge is searched (`agt_…`)" }),
  query: SearchKnowledge.fields.query,
  limit: SearchKnowledge.fields.limit
}).annotations({ title: "search_knowledge" })
export type SearchKnowledgeArguments = typeof SearchKnowledgeArguments.Type

export const AskAgentArguments = StrictStruct({
  agent: AgentId.annotations({ description: "The agent asked (`agt_…`)" }),
  message: SendMessage.fields.message,
  conversation: SendMessage.fields.conversation_id
}).annotations({ title: "ask_agent" })
export type AskAgentArguments = typeof AskAgentArguments.Type

export const ListAgentsArguments = StrictStruct({
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100)).annotations({ description: "1 to 100, default 20" })),
  starting_after: Schema.optional(Schema.String.annotations({ description: "The cursor `pagination.next_cursor` gave" }))
}).annotations({ title: "list_agents" })
export type ListAgentsArguments = typeof ListAgentsArguments.Type

export const CreateTicketArguments = CreateTicket.annotations({ title: "create_ticket" })

export const GetTicketArguments = StrictStruct({
  ticket: TicketPublicId.annotations({ description: "The ticket's public id (`tck_…`)" })
}).annotations({ title: "get_ticket" })
export type GetTicketArguments = typeof GetTicketArguments.Type

export class McpGroup extends HttpApiGroup.make("mcp")
  .add(
    HttpApiEndpoint.post("serve", "/v1/mcp")
      .setPayload(McpBody)
      .addSuccess(Schema.Union(JsonRpcResponse, Schema.Array(JsonRpcResponse)).annotations({ identifier: "McpAnswer" }))
      .addSuccess(HttpApiSchema.Empty(202))
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(PayloadTooLarge))
      .addError(ApiError(UnsupportedMediaType))
      .annotate(OpenApi.Summary, "Model Context Protocol (streamable HTTP): the agents' tools for an AI client")
      .annotate(
        OpenApi.Description,
        "A JSON-RPC 2.0 message or batch of the Model Context Protocol; `200` with the responses as JSON, `202` " +
          "when the body holds no request. Stateless: no `Mcp-Session-Id`, every request carries the key."
      )
      .annotate(OpenApi.ExternalDocs, { url: protocolUrl, description: "Model Context Protocol: streamable HTTP" })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("mcp"))
  .annotate(OpenApi.Title, "MCP")
  .annotate(OpenApi.ExternalDocs, { url: protocolUrl, description: "The Model Context Protocol" }) {}

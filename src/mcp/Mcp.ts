/**
 * The MCP endpoint's JSON-RPC: each message of a request's body answered for the key that sent it, with the
 * protocol's schemas (`@effect/ai`'s `McpSchema`) decoding the params and encoding the results, and its
 * `McpServer` registry holding and running the tools (`Tools.ts`).
 *
 * Stateless: `McpServer`'s own HTTP layer keeps one process-wide list of clients and tools and runs a tool
 * without the request that asked for it, so it can neither list a key's tools nor charge its workspace; here
 * every message is answered in its request's fiber, for its key, and nothing is kept between requests, so any
 * process answers any of them (docs/reference/mcp.md).
 */
import * as McpSchema from "@effect/ai/McpSchema"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { CallerShape } from "../../schema/Auth.js"
import { failureClassOf } from "../../schema/Errors.js"
import { AgentId, SourceId } from "../../schema/Ids.js"
import { KnowledgeSource } from "../../schema/Knowledge.js"
import type { JsonRpcMessage, JsonRpcRequest, McpBody } from "../../schema/Mcp.js"
import { Agents } from "../agents/Agents.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { makeTools, ToolCaller } from "./Tools.js"

const latestVersion = "2025-06-18"
const versions = [latestVersion, "2025-03-26", "2024-11-05"]

/** JSON-RPC's error for "resource not found" as the protocol uses it. */
const resourceNotFound = -32002

interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

const rpcError = (code: number, message: string, data?: unknown): RpcError => ({
  code,
  message,
  ...(data === undefined ? {} : { data })
})

/** A request's params decoded with its method's payload schema: a failure is `-32602` naming the field. */
const decodeParams = <A, I>(schema: Schema.Schema<A, I, never>, params: unknown): Effect.Effect<A, RpcError> =>
  Effect.mapError(Schema.decodeUnknown(schema)(params), (error) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const at = issue === undefined || issue.path.length === 0 ? "" : ` at params.${issue.path.join(".")}`
    return rpcError(McpSchema.INVALID_PARAMS_ERROR_CODE, `Invalid params${at}: ${issue?.message ?? error.message}`)
  })

const encodeResult = <A, I>(schema: Schema.Schema<A, I, never>, value: A) => Effect.orDie(Schema.encode(schema)(value))

const sourceUri = (agentId: string, sourceId: string) => `knowledge://agents/${agentId}/sources/${sourceId}`
const sourceUriPattern = /^knowledge:\/\/agents\/([^/]+)\/sources\/([^/]+)$/
const isAgentId = Schema.is(AgentId)
const isSourceId = Schema.is(SourceId)

/** The knowledge sources of this many agents at most are listed as resources, a page of each. */
const listedAgents = "20"

const isRequest = (message: JsonRpcMessage): message is JsonRpcRequest => "method" in message
const isCall = (message: JsonRpcMessage): message is JsonRpcRequest & { readonly id: string | number } =>
  isRequest(message) && message.id !== undefined

export class Mcp extends Effect.Service<Mcp>()("Mcp/Mcp", {
  scoped: Effect.gen(function* () {
    const { entries, registry } = yield* makeTools
    const knowledge = yield* Knowledge
    const agents = yield* Agents

    const allowed = (caller: CallerShape) => entries.filter((e) => caller.scopes.includes(e.scope))
    const readsKnowledge = (caller: CallerShape) => caller.scopes.includes("read:knowledge")

    // elicitation and sampling need a stream back to the client, which a stateless server keeps none of
    const client = McpSchema.McpServerClient.of({
      clientId: 0,
      getClient: Effect.dieMessage("this MCP server sends no requests to its clients")
    })

    const initialize = (params: unknown) =>
      Effect.flatMap(decodeParams(McpSchema.Initialize.payloadSchema, params), (input) =>
        encodeResult(
          McpSchema.InitializeResult,
          new McpSchema.InitializeResult({
            protocolVersion: versions.includes(input.protocolVersion) ? input.protocolVersion : latestVersion,
            capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } },
            serverInfo: { name: "assistant-platform", version: "1.0.0" },
            instructions:
              "Tools over the agents of one workspace: search an agent's knowledge, ask an agent, list agents, " +
              "create and read support tickets. Which tools are listed depends on the key's scopes."
          })
        )
      )

    const listTools = (caller: CallerShape) =>
      encodeResult(McpSchema.ListToolsResult, new McpSchema.ListToolsResult({ tools: allowed(caller).map((e) => e.tool) }))

    const callTool = (caller: CallerShape, params: unknown) =>
      Effect.gen(function* () {
        const call = yield* decodeParams(McpSchema.CallTool.payloadSchema, params)
        const entry = entries.find((e) => e.tool.name === call.name)
        if (entry === undefined) return yield* Effect.fail(rpcError(McpSchema.INVALID_PARAMS_ERROR_CODE, `Unknown tool: ${call.name}`))
        if (!caller.scopes.includes(entry.scope)) {
          return yield* Effect.fail(
            rpcError(McpSchema.INVALID_PARAMS_ERROR_CODE, `This key lacks the scope \`${entry.scope}\` that ${call.name} needs.`, {
              code: "key_scope_mismatch",
              scope: entry.scope
            })
          )
        }
        const result = yield* registry.callTool(call).pipe(
          Effect.locally(ToolCaller, Option.some(caller)),
          Effect.provideService(McpSchema.McpServerClient, client),
          Effect.mapError((error) => rpcError(error.code, error.message))
        )
        return yield* encodeResult(McpSchema.CallToolResult, result)
      })

    /** The knowledge sources of the key's agents (the first page of each of the first agents). */
    const listResources = (caller: CallerShape) =>
      Effect.gen(function* () {
        if (!readsKnowledge(caller)) return yield* encodeResult(McpSchema.ListResourcesResult, new McpSchema.ListResourcesResult({ resources: [] }))
        const page = yield* agents.list(caller, { limit: listedAgents })
        const resources: Array<McpSchema.Resource> = []
        for (const agent of page.agents) {
          const { sources } = yield* knowledge.list(caller, agent.id, {})
          for (const source of sources) {
            resources.push(
              new McpSchema.Resource({
                uri: sourceUri(agent.id, source.id),
                name: source.title,
                description: `A ${source.type} source of the agent ${agent.name} (${source.status})`,
                mimeType: "application/json"
              })
            )
          }
        }
        return yield* encodeResult(McpSchema.ListResourcesResult, new McpSchema.ListResourcesResult({ resources }))
      })

    const readResource = (caller: CallerShape, params: unknown) =>
      Effect.gen(function* () {
        const { uri } = yield* decodeParams(McpSchema.ReadResource.payloadSchema, params)
        const match = sourceUriPattern.exec(uri)
        const agentId = match?.[1]
        const sourceId = match?.[2]
        const notFound = rpcError(resourceNotFound, `Resource not found: ${uri}`, { uri })
        if (!readsKnowledge(caller)) {
          return yield* Effect.fail(
            rpcError(McpSchema.INVALID_PARAMS_ERROR_CODE, "This key lacks the scope `read:knowledge` that resources need.", {
              code: "key_scope_mismatch",
              scope: "read:knowledge"
            })
          )
        }
        if (!isAgentId(agentId) || !isSourceId(sourceId)) return yield* Effect.fail(notFound)
        const source = yield* knowledge.retrieve(caller, agentId, sourceId).pipe(
          Effect.catchTag("ResourceMissing", () => Effect.fail(notFound))
        )
        const text = JSON.stringify(yield* encodeResult(KnowledgeSource, source))
        return yield* encodeResult(McpSchema.ReadResourceResult, { contents: [{ uri, mimeType: "application/json", text }] })
      })

    const templates = () =>
      encodeResult(
        McpSchema.ListResourceTemplatesResult,
        new McpSchema.ListResourceTemplatesResult({
          resourceTemplates: [
            new McpSchema.ResourceTemplate({
              uriTemplate: "knowledge://agents/{agent_id}/sources/{source_id}",
              name: "Knowledge source",
              description: "A knowledge source of an agent: its title, type, status and origin",
              mimeType: "application/json"
            })
          ]
        })
      )

    /** One request's result, or its JSON-RPC error. */
    const answer = (caller: CallerShape, request: JsonRpcRequest): Effect.Effect<unknown, unknown> => {
      switch (request.method) {
        case "initialize":
          return initialize(request.params)
        case "ping":
          return Effect.succeed({})
        case "tools/list":
          return listTools(caller)
        case "tools/call":
          return callTool(caller, request.params)
        case "resources/list":
          return listResources(caller)
        case "resources/templates/list":
          return templates()
        case "resources/read":
          return readResource(caller, request.params)
        default:
          return Effect.fail(rpcError(McpSchema.METHOD_NOT_FOUND_ERROR_CODE, `Method not found: ${request.method}`))
      }
    }

    /**
     * A failure of the catalog past the tools (a listing's `ResourceMissing`, ...) is an error of the request; a
     * defect is logged and answered `-32603`, as the API answers one `500 internal_error`.
     */
    const settled = (caller: CallerShape, request: JsonRpcRequest & { readonly id: string | number }) =>
      answer(caller, request).pipe(
        Effect.catchAll((error: unknown) => {
          const failure = failureClassOf(error)
          if (failure === undefined) return Effect.fail(error as RpcError)
          const { message } = error as { readonly message: string }
          return Effect.fail(rpcError(McpSchema.INVALID_PARAMS_ERROR_CODE, message, { code: failure.code }))
        }),
        Effect.either,
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logError("MCP request failed with a defect", cause),
            Either.left(rpcError(McpSchema.INTERNAL_ERROR_CODE, "Internal error"))
          )
        ),
        Effect.map((outcome) =>
          Either.isRight(outcome)
            ? { jsonrpc: "2.0" as const, id: request.id, result: outcome.right }
            : { jsonrpc: "2.0" as const, id: request.id, error: outcome.left }
        )
      )

    /**
     * The responses to a body's requests, in order (none when it held only notifications and answers); a single
     * message gets a single response, a batch an array.
     */
    const serve = (caller: CallerShape, body: McpBody) =>
      Effect.gen(function* () {
        const messages: ReadonlyArray<JsonRpcMessage> = Array.isArray(body) ? body : [body as JsonRpcMessage]
        const calls = messages.filter(isCall)
        // notifications (`notifications/initialized`, `notifications/cancelled`) change nothing on a stateless server
        const responses = yield* Effect.forEach(calls, (call) => settled(caller, call))
        if (responses.length === 0) return Option.none()
        return Option.some(Array.isArray(body) ? responses : responses[0]!)
      })

    return { serve, toolsOf: allowed } as const
  })
}) {}

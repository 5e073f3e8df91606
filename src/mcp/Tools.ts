/**
 * The tools the MCP endpoint serves, registered with `@effect/ai`'s `McpServer` registry: each one a call to the
 * program its REST twin calls, with the arguments of the contract's schemas (`schema/Mcp.ts`) and the scope its
 * twin needs, read from the contract (`Policy.ts`), so a key may use a tool exactly when it may use the twin.
 */
import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { CallerShape, Scope } from "../../schema/Auth.js"
import { Message } from "../../schema/Conversations.js"
import { failureClassOf } from "../../schema/Errors.js"
import { Agent } from "../../schema/Agents.js"
import { KnowledgeSearch as KnowledgeSearchResult } from "../../schema/Knowledge.js"
import {
  AskAgentArguments,
  CreateTicketArguments,
  GetTicketArguments,
  ListAgentsArguments,
  SearchKnowledgeArguments
} from "../../schema/Mcp.js"
import { Pagination } from "../../schema/Envelope.js"
import { Ticket, TicketWithThread } from "../../schema/Tickets.js"
import { Agents } from "../agents/Agents.js"
import { policyOf } from "../auth/Policy.js"
import { Conversations } from "../conversations/Conversations.js"
import { KnowledgeSearch } from "../knowledge/Search.js"
import { Tickets } from "../tickets/Tickets.js"

/** The caller of the tool call being run: set around `McpServer.callTool`, whose handlers take only arguments. */
export const ToolCaller = FiberRef.unsafeMake<Option.Option<CallerShape>>(Option.none())

/** A tool as the endpoint knows it: its name and the scope its REST twin needs. */
export interface ToolEntry {
  readonly tool: McpSchema.Tool
  readonly scope: Scope
}

/** The scope of the twin at `method` `path` (the contract's route); a twin without one is a mistake of this file. */
const scopeOf = (method: string, path: string): Scope => {
  const scope = policyOf(method, path).scope
  if (Option.isNone(scope)) throw new Error(`MCP: ${method} ${path} is not an endpoint with a scope`)
  return scope.value
}

/** A schema's JSON Schema as a tool's `inputSchema`: an object at the top, its definitions beside it. */
const inputSchemaOf = (schema: Schema.Schema.Any): unknown => {
  const $defs: Record<string, JSONSchema.JsonSchema7> = {}
  const made = JSONSchema.fromAST(schema.ast, { definitions: $defs, topLevelReferenceStrategy: "skip" })
  return Object.keys($defs).length === 0 ? made : { ...made, $defs }
}

const textOf = (value: unknown) => [McpSchema.TextContent.make({ type: "text", text: JSON.stringify(value) })]

const succeeded = (value: object) =>
  new McpSchema.CallToolResult({ content: textOf(value), structuredContent: value, isError: false })

/** What the twin would have refused, told to the model as the twin's error (code, message, param). */
const refused = (error: { readonly code: string; readonly message: string; readonly param?: string | undefined }) => {
  const body = { error: { code: error.code, message: error.message, ...(error.param === undefined ? {} : { param: error.param }) } }
  return new McpSchema.CallToolResult({ content: textOf(body), structuredContent: body, isError: true })
}

const invalidArguments = (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const param = issue === undefined || issue.path.length === 0 ? undefined : issue.path.join(".")
  return refused({ code: "parameter_invalid", message: issue?.message ?? error.message, param })
}

/** A failure of the catalog becomes the tool's error result; anything else stays a failure (a defect). */
const asResult = <E>(error: E): Effect.Effect<McpSchema.CallToolResult, E> => {
  const failure = failureClassOf(error)
  if (failure === undefined) return Effect.fail(error)
  const { message, param } = error as { readonly message: string; readonly param?: string | undefined }
  return Effect.succeed(refused({ code: failure.code, message, param }))
}

const ListAgentsResult = Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(Agent), pagination: Pagination })

export const makeTools = Effect.gen(function* () {
  const registry = yield* McpServer.McpServer.make
  const search = yield* KnowledgeSearch
  const conversations = yield* Conversations
  const agents = yield* Agents
  const tickets = yield* Tickets

  const entries: Array<ToolEntry> = []

  /**
   * One tool: its arguments decoded with `args`, run by `run` for the caller of the call, its answer encoded
   * with `answer` (the twin's `data`). A defect is the request's (the endpoint answers JSON-RPC `-32603`).
   */
  const add = <A, I, R, B, BI, E>(options: {
    readonly name: string
    readonly title: string
    readonly description: string
    readonly twin: readonly [method: string, path: string]
    readonly readOnly: boolean
    readonly args: Schema.Schema<A, I, never>
    readonly answer: Schema.Schema<B, BI, never>
    readonly run: (caller: CallerShape, args: A) => Effect.Effect<B, E, R>
  }) =>
    Effect.gen(function* () {
      const context = yield* Effect.context<R>()
      const tool = new McpSchema.Tool({
        name: options.name,
        title: options.title,
        description: options.description,
        inputSchema: inputSchemaOf(options.args),
        annotations: new McpSchema.ToolAnnotations({
          title: options.title,
          readOnlyHint: options.readOnly,
          destructiveHint: false,
          idempotentHint: options.readOnly,
          openWorldHint: false
        })
      })
      const decode = Schema.decodeUnknown(options.args)
      const encode = Schema.encode(options.answer)
      entries.push({ tool, scope: scopeOf(...options.twin) })
      yield* registry.addTool({
        tool,
        handle: (payload) =>
          Effect.gen(function* () {
            const caller = yield* FiberRef.get(ToolCaller)
            if (Option.isNone(caller)) return yield* Effect.dieMessage("an MCP tool ran without its caller")
            const args = yield* Effect.either(decode(payload ?? {}))
            if (args._tag === "Left") return invalidArguments(args.left)
            return yield* options.run(caller.value, args.right).pipe(
              Effect.flatMap((value) => Effect.orDie(encode(value))),
              Effect.map((encoded) => succeeded(encoded as object)),
              Effect.catchAll(asResult),
              Effect.orDie
            )
          }).pipe(Effect.provide(context))
      })
    })

  yield* add({
    name: "search_knowledge",
    title: "Search an agent's knowledge",
    description:
      "The passages of an agent's knowledge (and its Q&A) that best match a query, ranked, with their scores and " +
      "their sources; `relevant` marks those a reply would draw on.",
    twin: ["POST", "/v1/agents/:agent_id/knowledge/search"],
    readOnly: true,
    args: SearchKnowledgeArguments,
    answer: KnowledgeSearchResult,
    run: (caller, { agent, limit, query }) => search.search(caller, agent, { query, ...(limit === undefined ? {} : { limit }) })
  })
  yield* add({
    name: "ask_agent",
    title: "Ask an agent",
    description:
      "Sends a message to an agent and answers its reply with the sources it drew on. Pass the reply's " +
      "`conversation_id` as `conversation` to follow up. Counts as a reply of the plan.",
    twin: ["POST", "/v1/agents/:id/messages"],
    readOnly: false,
    args: AskAgentArguments,
    answer: Message,
    run: (caller, { agent, conversation, message }) =>
      Effect.flatMap(
        conversations.send(caller, "api", agent, { message, ...(conversation === undefined ? {} : { conversation_id: conversation }) }),
        (sent) => conversations.awaitReply(caller, sent)
      )
  })
  yield* add({
    name: "list_agents",
    title: "List agents",
    description: "The agents of the key's workspace and environment, newest first, a page at a time.",
    twin: ["GET", "/v1/agents"],
    readOnly: true,
    args: ListAgentsArguments,
    answer: ListAgentsResult,
    run: (caller, { limit, starting_after }) =>
      Effect.map(
        agents.list(caller, {
          ...(limit === undefined ? {} : { limit: String(limit) }),
          ...(starting_after === undefined ? {} : { starting_after })
        }),
        ({ agents, pagination }) => ({ object: "list" as const, data: agents, pagination })
      )
  })
  yield* add({
    name: "create_ticket",
    title: "Create a ticket",
    description: "Opens a support ticket for an agent: a subject, optionally a first message and the visitor's contact.",
    twin: ["POST", "/v1/tickets"],
    readOnly: false,
    args: CreateTicketArguments,
    answer: Ticket,
    run: (caller, input) => tickets.create({ caller, memberId: Option.none() }, input)
  })
  yield* add({
    name: "get_ticket",
    title: "Get a ticket",
    description: "A ticket with its thread: its messages and events, oldest first.",
    twin: ["GET", "/v1/tickets/:public_id"],
    readOnly: true,
    args: GetTicketArguments,
    answer: TicketWithThread,
    run: (caller, { ticket }) => tickets.retrieve(caller, ticket)
  })

  return { registry, entries } as const
})

/**
 * The security matrix, generated from the contract: every endpoint of `Api` is
 * either behind `Authentication` and run through every way a caller can be
 * wrong, or listed in `publicByDesign` with the reason. An endpoint added to
 * `Api` is in the matrix without anyone listing it; one whose path names a new
 * kind of id, or whose body must not be empty, fails until this file learns to
 * make one (`fixtures`, `samples`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { AgentType } from "../../schema/Agents.js"
import type { Scope } from "../../schema/Auth.js"
import { AgentId, EvaluationId, LessonId, ModuleId } from "../../schema/Ids.js"
import { WebhookId } from "../../schema/Webhooks.js"
import * as Fetcher from "../../layers/Fetcher.js"
import type { Client } from "../../src/sdk/index.js"
import { contactForm } from "../forms/support.js"
import { eventually } from "../support/eventually.js"
import { type ContractEndpoint, contractEndpoints, fillPath } from "../support/endpoints.js"
import { Harness, type HarnessShape, type Reply, type SeededWorkspace, testServer } from "../support/harness.js"

const thisFile = "test/http/security-matrix.test.ts"

/**
 * Endpoints without `Authentication`, each with why. Anything else without it
 * fails the suite.
 */
const publicByDesign: Record<string, string> = {
  "system.health": "liveness probe for the orchestrator; answers before any workspace exists",
  "system.ready": "readiness probe for the orchestrator",
  "system.openapi": "the contract itself is public (SDK generators and the docs page read it)",
  "formsPublic.config":
    "a browser reads it with the forms key in `Service-Api-Key` (checked by the forms service, test/forms/forms.test.ts)",
  "formsPublic.submit":
    "a browser posts it with the forms key in `Service-Api-Key` (checked by the forms service, test/forms/submit.test.ts)"
}

const shop = "https://shop.example.com"

let refreshedPages = 0

/** The keys one world of objects is made with: a workspace's full secret and widget keys of one environment. */
interface WorldKeys {
  readonly secret: string
  readonly widget: string
}

/** A set of objects of one workspace and environment, each made on first use, so one of each kind at most. */
interface World {
  readonly h: HarnessShape
  readonly keys: WorldKeys
  readonly api: Client
  readonly agentType: AgentType
  /** The id of `kind` (a path parameter's kind: `AgentId`, ...) in this world. */
  readonly id: (kind: string) => Effect.Effect<string>
}

const data = <A>(effect: Effect.Effect<{ readonly data: A }, unknown>) =>
  Effect.map(Effect.orDie(effect), (r) => r.data)

/** The body of a raw call that must have succeeded (what the fixtures make through the widget surface). */
const created = (label: string) => (reply: Reply) => {
  expect(reply.status, `${label}: ${reply.text}`).toBeLessThan(300)
  return reply.body.data
}

/**
 * How to make an object of each kind of id a path names, with the world's keys,
 * and return its id. A new kind of path parameter needs an entry here.
 */
const fixtures: Record<string, (w: World) => Effect.Effect<string>> = {
  AgentId: ({ agentType, api }) =>
    Effect.map(data(api.agents.create({ payload: { type: agentType, name: "Matrix", allowed_origins: [shop] } })), (a) => a.id),
  WebhookId: ({ api }) =>
    Effect.map(
      data(api.webhooks.create({ payload: { url: "https://receiver.example/hook", events: ["agent.created"] } })),
      (s) => s.id
    ),
  DeliveryId: ({ api, id }) =>
    Effect.flatMap(id("WebhookId"), (hook) =>
      Effect.map(data(api.webhooks.test({ path: { id: WebhookId.make(hook) } })), (t) => t.delivery_id)
    ),
  TicketPublicId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(
        data(api.tickets.create({ headers: {}, payload: { agent_id: AgentId.make(agent), subject: "Printer on fire" } })),
        (t) => t.public_id
      )
    ),
  QaId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(
        data(api.qa.create({ path: { id: AgentId.make(agent) }, payload: { question: "Q?", answer: "A." } })),
        (q) => q.id
      )
    ),
  CategoryId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(data(api.qa.createCategory({ path: { id: AgentId.make(agent) }, payload: { name: "Billing" } })), (c) => c.id)
    ),
  "param:term": ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.as(data(api.glossary.addTerm({ path: { id: AgentId.make(agent) }, payload: { term: "Router" } })), "Router")
    ),
  SourceId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(
        data(
          api.knowledge.create({
            path: { agent_id: AgentId.make(agent) },
            payload: { type: "text", title: "T", content: "Some text." }
          })
        ),
        (s) => s.id
      )
    ),
  CrawlId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.sync(() => `https://127.1.${++crawledSites % 250}.1:9/`).pipe(
        Effect.flatMap((url) => data(api.crawls.create({ path: { agent_id: AgentId.make(agent) }, payload: { url } }))),
        Effect.map((c) => c.id)
      )
    ),
  ModuleId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(data(api.training.createModule({ path: { id: AgentId.make(agent) }, payload: { title: "M" } })), (m) => m.id)
    ),
  LessonId: ({ api, id }) =>
    Effect.gen(function* () {
      const agent = AgentId.make(yield* id("AgentId"))
      const module_id = ModuleId.make(yield* id("ModuleId"))
      return (yield* data(api.training.createLesson({ path: { id: agent }, payload: { module_id, title: "L" } }))).id
    }),
  LessonSourceId: ({ api, id }) =>
    Effect.gen(function* () {
      const agent = AgentId.make(yield* id("AgentId"))
      const lesson_id = LessonId.make(yield* id("LessonId"))
      const payload = { lesson_id, type: "text", title: "T", content: "Some text." } as const
      return (yield* data(api.training.createSource({ path: { id: agent }, payload }))).id
    }),
  // with its bytes, so that `confirm` succeeds
  FileId: ({ api, h, keys }) =>
    Effect.gen(function* () {
      const file = yield* data(api.files.create({ payload: { filename: "a.txt", content_type: "text/plain", size_bytes: 3 } }))
      created("upload")(
        yield* h.call("PUT", `/v1/files/${file.id}/content`, { key: keys.secret, headers: { "content-type": "text/plain" }, body: "abc" })
      )
      return file.id
    }),
  // through the widget, so both surfaces can name it: the widget's routes want a conversation it opened
  ConversationId: ({ h, keys, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(
        h.call("POST", `/widget/v1/agents/${agent}/conversations`, { key: keys.widget, headers: { origin: shop }, body: {} }),
        (r) => created("open a conversation")(r).id as string
      )
    ),
  MessageId: ({ h, keys, id }) =>
    Effect.gen(function* () {
      const agent = yield* id("AgentId")
      const conversation = yield* id("ConversationId")
      const reply = yield* h.call("POST", `/widget/v1/agents/${agent}/conversations/${conversation}/messages`, {
        key: keys.widget,
        headers: { origin: shop },
        body: { message: "Hello", stream: false }
      })
      return created("send a message")(reply).id as string
    }),
  LeadId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(data(api.leads.create({ payload: { agent_id: AgentId.make(agent), email: "ada@example.com" } })), (l) => l.id)
    ),
  EvaluationId: ({ api, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(
        data(
          api.evaluations.create({
            path: { id: AgentId.make(agent) },
            payload: { name: "Matrix", cases: [{ question: "Q?", expect: { declines: true } }] }
          })
        ),
        (e) => e.id
      )
    ),
  // the evaluation's first run
  EvaluationRunId: ({ api, id }) =>
    Effect.gen(function* () {
      const agent = AgentId.make(yield* id("AgentId"))
      const evaluation = EvaluationId.make(yield* id("EvaluationId"))
      const read = yield* data(api.evaluations.retrieve({ path: { id: agent, evaluation_id: evaluation } }))
      return read.latest_run!.id
    }),
  ApiKeyId: ({ h, keys }) =>
    Effect.map(h.call("POST", "/v1/keys", { key: keys.secret, body: { kind: "widget", scopes: ["widget:chat"] } }), (r) =>
      created("create a key")(r).id as string
    ),
  // an OpenAI-compatible model: an agent, named by its id
  "param:model": ({ id }) => id("AgentId"),
  FormId: ({ h, keys, id }) =>
    Effect.flatMap(id("AgentId"), (agent) =>
      Effect.map(h.call("POST", "/v1/forms", { key: keys.secret, body: contactForm(agent) }), (r) => created("create a form")(r).id as string)
    )
}

const missingFixture = (endpoint: ContractEndpoint, param: { name: string; kind: string }) =>
  `${endpoint.label}: its path parameter \`${param.name}\` is a \`${param.kind}\`, which no fixture makes. ` +
  `Add \`${param.kind}: (w) => ...\` to \`fixtures\` in ${thisFile}: make one with the world's keys ` +
  "(`w.api` is the typed client of its secret key, `w.id(kind)` the objects it belongs to) and return its id."

const makeWorld = (h: HarnessShape, keys: WorldKeys, agentType: AgentType): Effect.Effect<World> =>
  Effect.map(h.client(keys.secret), (api) => {
    const made = new Map<string, string>()
    const world: World = {
      h,
      keys,
      api,
      agentType,
      id: (kind) =>
        Effect.suspend(() => {
          const known = made.get(kind)
          if (known !== undefined) return Effect.succeed(known)
          const fixture = fixtures[kind]
          if (fixture === undefined) return Effect.dieMessage(`no fixture makes a \`${kind}\`; add one to \`fixtures\` in ${thisFile}`)
          return Effect.tap(fixture(world), (value) => Effect.sync(() => made.set(kind, value)))
        })
    }
    return world
  })

/** What a call to an endpoint sends besides its path, for the checks that reach the handler. */
interface Sample {
  readonly body?: (w: World) => Effect.Effect<unknown>
  readonly query?: (w: World) => Effect.Effect<Record<string, string>>
  readonly contentType?: string
  /** Its success is an event stream that stays open: read to its headers. */
  readonly streams?: boolean
  /** Ids of these kinds made for this endpoint alone (once per world), where the shared fixture's would not do. */
  readonly ids?: Record<string, (w: World) => Effect.Effect<string>>
  /** The code a path naming another workspace's or environment's object answers (default `resource_missing`). */
  readonly missingCode?: string
}

let crawledSites = 0
const fixed = (body: unknown) => (_: World) => Effect.succeed(body)
/** A body (or query) naming objects of the world: `make` gets their ids, in the order of `kinds`. */
const using =
  <const K extends ReadonlyArray<string>, A>(kinds: K, make: (...ids: { [I in keyof K]: string }) => A) =>
  (w: World): Effect.Effect<A> =>
    Effect.map(Effect.forEach(kinds, w.id), (ids) => make(...(ids as unknown as { [I in keyof K]: string })))

/**
 * A valid body and query per endpoint (`group.endpoint`). One that takes no
 * body, or whose body decodes from `{}` (then sent), and whose query may be
 * empty can be left out.
 */
const samples: Record<string, Sample> = {
  "agents.create": { body: fixed({ type: "support", name: "X" }) },
  "keys.create": { body: fixed({ kind: "secret" }) },
  "agents.update": { body: fixed({ name: "Renamed" }) },
  "webhooks.create": { body: fixed({ url: "https://receiver.example/hook", events: ["agent.created"] }) },
  "webhooks.update": { body: fixed({ is_active: true }) },
  "tickets.create": { body: using(["AgentId"], (agent_id) => ({ agent_id, subject: "x" })) },
  "tickets.update": { body: fixed({ priority: "high" }) },
  "tickets.addMessage": { body: fixed({ body: "hello" }) },
  "qa.create": { body: fixed({ question: "Q?", answer: "A." }) },
  "qa.update": { body: fixed({ answer: "New." }) },
  "qa.createCategory": { body: fixed({ name: "Shipping" }) },
  "qa.updateCategory": { body: fixed({ description: "Invoices" }) },
  "glossary.replace": { body: fixed({ terms: [{ term: "Modem" }] }) },
  "glossary.addTerm": { body: fixed({ term: "Switch" }) },
  "glossary.updateTerm": { body: fixed({ enabled: false }) },
  "knowledge.create": { body: fixed({ type: "text", title: "T", content: "Some text." }) },
  "knowledge.batch": { body: fixed({ urls: ["http://127.0.0.1:9/a"] }) },
  "knowledge.search": { body: fixed({ query: "What are the opening hours?" }) },
  // only an indexed url source can be refreshed: one each world, its page answered by the test fetcher
  "knowledge.refresh": {
    ids: {
      SourceId: ({ api, id }) =>
        Effect.gen(function* () {
          const agent_id = AgentId.make(yield* id("AgentId"))
          const url = `https://pages.example/refresh-${++refreshedPages}`
          const source = yield* data(api.knowledge.create({ path: { agent_id }, payload: { type: "url", url } }))
          yield* eventually(
            data(api.knowledge.retrieve({ path: { agent_id, source_id: source.id } })),
            (s) => s.status === "indexed",
            { label: "the url source to refresh indexed" }
          ).pipe(Effect.orDie)
          return source.id
        })
    }
  },
  // a site of its own each time: an agent's second crawl of a site still running is refused
  "crawls.create": { body: () => Effect.sync(() => ({ url: `https://127.0.${++crawledSites % 250}.${1 + (crawledSites % 200)}:9/` })) },
  "crawls.update": { body: fixed({ schedule: "weekly" }) },
  "training.createModule": { body: fixed({ title: "M" }) },
  "training.updateModule": { body: fixed({ title: "M2" }) },
  "training.deleteModule": { query: () => Effect.succeed({ cascade: "true" }) },
  "training.createLesson": { body: using(["ModuleId"], (module_id) => ({ module_id, title: "L" })) },
  "training.listLessons": { query: using(["ModuleId"], (module_id) => ({ module_id })) },
  "training.updateLesson": { body: fixed({ title: "L2" }) },
  "training.deleteLesson": { query: () => Effect.succeed({ cascade: "true" }) },
  "training.createSource": {
    body: using(["LessonId"], (lesson_id) => ({ lesson_id, type: "text", title: "T", content: "x" }))
  },
  "training.listSources": { query: using(["LessonId"], (lesson_id) => ({ lesson_id })) },
  "training.updateSource": { body: fixed({ title: "S2" }) },
  "files.create": { body: fixed({ filename: "a.txt", content_type: "text/plain", size_bytes: 3 }) },
  "files.upload": { body: fixed("abc"), contentType: "text/plain" },
  "conversations.send": { body: fixed({ message: "Hello", stream: false }) },
  "leads.create": { body: using(["AgentId"], (agent_id) => ({ agent_id, email: "ada@example.com" })) },
  "widget.captureLead": { body: fixed({ email: "ana@example.com" }) },
  "widget.sendMessage": { body: fixed({ message: "Hi", stream: false }) },
  "widget.escalate": { body: fixed({ visitor_email: "ana@example.com" }) },
  "widget.rateMessage": { body: fixed({ rating: "down", comment: "Not what I asked" }) },
  "conversations.rateMessage": { body: fixed({ rating: "up" }) },
  "widget.conversationEvents": { streams: true },
  "forms.create": { body: using(["AgentId"], (agent) => contactForm(agent)) },
  "forms.update": { body: fixed({ title: { en: "Changed" } }) },
  "evaluations.create": { body: fixed({ name: "E", cases: [{ question: "Q?", expect: { contains: "A" } }] }) },
  "evaluations.update": { body: fixed({ name: "E2", run_on_knowledge_change: true }) },
  // the JSON-RPC of the protocol: any secret key may ask; which tools it sees is test/mcp's
  "mcp.serve": { body: fixed({ jsonrpc: "2.0", id: 1, method: "tools/list" }) },
  // OpenAI's shapes: an agent as the model; one of another workspace is no model of this key
  "completions.create": { body: using(["AgentId"], (model) => ({ model, messages: [{ role: "user", content: "Hello" }] })) },
  "completions.retrieveModel": { missingCode: "model_not_found" }
}

/** The agent type a group's objects need (modules, lessons and their sources: a `training` agent). */
const groupAgentType: Record<string, AgentType> = { training: "training" }

type KeyKind = "secret" | "widget"

/** The kinds of key an endpoint takes, each with the scope it needs (none: any key of the kind). */
const acceptedKeys = (e: ContractEndpoint): ReadonlyArray<{ readonly kind: KeyKind; readonly scope: Option.Option<Scope> }> => {
  const widgetSurface = Option.isSome(e.scope) && e.scope.value.startsWith("widget:")
  return [
    ...(widgetSurface ? [] : [{ kind: "secret" as const, scope: e.scope }]),
    ...(Option.isSome(e.widgetScope) ? [{ kind: "widget" as const, scope: e.widgetScope }] : [])
  ]
}

/** A scope of `kind` other than `scope`, for a key that is valid but lacks it. */
const otherScope = (kind: KeyKind, scope: Scope): Scope =>
  kind === "widget"
    ? scope === "widget:chat" ? "widget:tickets" : "widget:chat"
    : scope === "read:usage" ? "read:agents" : "read:usage"

const expectRefused = (reply: Reply, status: number, code: string, label: string) => {
  expect(reply.status, `${label}: status (body ${reply.text})`).toBe(status)
  expect(reply.body?.error?.code, `${label}: code`).toBe(code)
  expect(reply.body?.meta?.request_id, `${label}: request id`).toMatch(/^req_/)
}

const eventCount = (ws: SeededWorkspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`select count(*)::int as n from events where workspace_id = ${ws.workspace.id}`
  ).pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)

/**
 * Until the workspace's sources are processed, its crawls ended and its evaluation runs ended: their events are
 * written in the background.
 */
const sourcesSettled = (ws: SeededWorkspace) =>
  eventually(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number }>`
        select (select count(*) from knowledge_sources
          where workspace_id = ${ws.workspace.id} and status in ('pending', 'processing'))::int
          + (select count(*) from crawls where workspace_id = ${ws.workspace.id} and status in ('queued', 'running'))::int
          + (select count(*) from evaluation_runs
            where workspace_id = ${ws.workspace.id} and status in ('queued', 'running'))::int as n`
    ).pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie),
    (n) => n === 0,
    { label: "the fixtures' sources processed" }
  ).pipe(Effect.orDie)

const runMatrix = (h: HarnessShape, e: ContractEndpoint) =>
  Effect.gen(function* () {
    const ws = yield* h.seed()
    const other = yield* h.seed()
    const sample = samples[e.id] ?? {}
    const agentType = groupAgentType[e.id.split(".")[0]!] ?? "support"
    const widgetLive = (yield* ws.key({ kind: "widget", environment: "live" })).secret
    // the widget surface checks the page's origin against the agent's before anything else
    const surfaceHeaders: Record<string, string> = Option.isSome(e.widgetScope) ? { origin: shop } : {}
    const missingKinds = e.params.filter((p) => fixtures[p.kind] === undefined && sample.ids?.[p.kind] === undefined)
    // an endpoint's own ids, made once per world
    const ownIds = new Map<World, Map<string, string>>()
    const ownId = (w: World, kind: string, make: (w: World) => Effect.Effect<string>) =>
      Effect.gen(function* () {
        const made = ownIds.get(w) ?? new Map<string, string>()
        ownIds.set(w, made)
        const known = made.get(kind)
        if (known !== undefined) return known
        const id = yield* make(w)
        made.set(kind, id)
        return id
      })

    const sandboxKeys: WorldKeys = { secret: ws.secretTest, widget: ws.widgetTest }
    const liveKeys: WorldKeys = { secret: ws.secretLive, widget: widgetLive }
    const otherKeys: WorldKeys = { secret: other.secretTest, widget: other.widgetTest }
    const world = (keys: WorldKeys) => makeWorld(h, keys, agentType)

    /**
     * The endpoint called on the objects of `w` with `headers` for the key, and the sample's body and query.
     * A kind no fixture makes gets a well-formed id no object has (the key checks come before any lookup).
     */
    const callOn = (w: World, headers: Record<string, string>) =>
      Effect.gen(function* () {
        const ids = new Map<string, string>()
        for (const p of e.params) {
          const own = sample.ids?.[p.kind]
          ids.set(p.name, own !== undefined ? yield* ownId(w, p.kind, own) : fixtures[p.kind] === undefined ? p.unknown : yield* w.id(p.kind))
        }
        const query = sample.query === undefined ? "" : `?${new URLSearchParams(yield* sample.query(w))}`
        const body = sample.body !== undefined ? yield* sample.body(w) : e.hasBody ? {} : undefined
        return yield* h.call(e.method, `${fillPath(e, (p) => ids.get(p.name)!)}${query}`, {
          headers: {
            ...surfaceHeaders,
            ...(sample.contentType === undefined ? {} : { "content-type": sample.contentType }),
            ...headers
          },
          ...(sample.streams === true ? { untilHeaders: true } : {}),
          ...(body === undefined ? {} : { body })
        })
      })
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
    const fullKey = (keys: WorldKeys, kind: KeyKind) => (kind === "secret" ? keys.secret : keys.widget)

    // 1. who the caller is, and whether its key may call this endpoint at all; a refused call changes
    // nothing, so all of them run on one set of objects
    const own = yield* world(sandboxKeys)
    for (const p of e.params) {
      const make = sample.ids?.[p.kind]
      if (make !== undefined) yield* ownId(own, p.kind, make)
      else if (fixtures[p.kind] !== undefined) yield* own.id(p.kind)
    }
    if (sample.body !== undefined) yield* sample.body(own)
    if (sample.query !== undefined) yield* sample.query(own)
    yield* sourcesSettled(ws)
    const eventsBefore = yield* eventCount(ws)
    const refused = (headers: Record<string, string>, status: number, code: string, label: string) =>
      Effect.map(callOn(own, headers), (reply) => expectRefused(reply, status, code, label))

    yield* refused({}, 401, "missing_authorization", "no Authorization header")
    yield* refused(bearer("sk_test_unknownunknownunknown00"), 401, "invalid_api_key", "unknown key")
    yield* refused(bearer("not-a-key"), 401, "invalid_api_key", "malformed key")
    yield* refused({ authorization: `Basic ${btoa("user:pass")}` }, 401, "invalid_api_key", "Basic scheme")
    yield* refused({ "x-api-key": "sk_test_unknownunknownunknown00" }, 401, "invalid_api_key", "unknown legacy x-api-key")
    yield* refused(bearer(ws.formsTest), 403, "key_scope_mismatch", "forms key")

    const accepted = acceptedKeys(e)
    expect(accepted.length, `${e.label} takes no kind of key`).toBeGreaterThan(0)
    const takes = (kind: KeyKind) => accepted.some((a) => a.kind === kind)
    if (!takes("secret")) {
      yield* refused(bearer(ws.secretTest), 403, "key_scope_mismatch", "secret key")
      // even one somehow given the endpoint's own scope
      if (Option.isSome(e.scope)) {
        const odd = yield* ws.key({ kind: "secret", scopes: [e.scope.value] })
        yield* refused(bearer(odd.secret), 403, "key_scope_mismatch", `secret key holding ${e.scope.value}`)
      }
    }
    if (!takes("widget")) yield* refused(bearer(ws.widgetTest), 403, "key_scope_mismatch", "widget key")
    for (const { kind, scope } of accepted) {
      const revoked = yield* ws.key({ kind })
      yield* ws.revoke(revoked.id)
      yield* refused(bearer(revoked.secret), 401, "invalid_api_key", `revoked ${kind} key`)
      if (Option.isSome(scope)) {
        const lacking = yield* ws.key({ kind, scopes: [otherScope(kind, scope.value)] })
        yield* refused(bearer(lacking.secret), 403, "key_scope_mismatch", `${kind} key without ${scope.value}`)
      }
    }

    expect(yield* eventCount(ws), "events written by refused calls").toBe(eventsBefore)

    // 2. the rest reaches the handler: it needs real ids and a valid request
    if (missingKinds.length > 0) expect.fail(missingKinds.map((p) => missingFixture(e, p)).join("\n"))
    if (!e.bodyOptional && sample.body === undefined) {
      expect.fail(`${e.label}: its body may not be empty; add a valid one as \`samples["${e.id}"].body\` in ${thisFile}`)
    }
    if (!e.queryOptional && sample.query === undefined) {
      expect.fail(`${e.label}: its query may not be empty; add a valid one as \`samples["${e.id}"].query\` in ${thisFile}`)
    }

    for (const [i, { kind, scope }] of accepted.entries()) {
      // 3. a key of the right kind with exactly the scope gets past the checks; on its own objects, it finds them
      const exact = yield* ws.key({ kind, ...(Option.isSome(scope) ? { scopes: [scope.value] } : {}) })
      const allowed = yield* callOn(i === 0 ? own : yield* world(sandboxKeys), bearer(exact.secret))
      const label = `${kind} key with ${Option.getOrElse(scope, () => "any scope")}`
      expect(
        allowed.status,
        `${label}, on its own objects: ${allowed.text} (if the request is what is wrong, fix \`samples["${e.id}"]\` or the fixtures in ${thisFile})`
      ).toBeGreaterThanOrEqual(200)
      expect(allowed.status, `${label}, on its own objects: ${allowed.text}`).toBeLessThan(300)

      // the legacy header authenticates like the bearer one: on fresh objects it gets the very same answer
      const legacy = yield* callOn(yield* world(sandboxKeys), { "x-api-key": exact.secret })
      expect(legacy.status, `legacy x-api-key: ${legacy.text}`).toBe(allowed.status)

      // 4. objects of another workspace or of the other environment do not exist for this key
      if (e.params.length > 0) {
        const foreign = yield* callOn(yield* world(otherKeys), bearer(fullKey(sandboxKeys, kind)))
        const missing = sample.missingCode ?? "resource_missing"
        expectRefused(foreign, 404, missing, `${kind} key on another workspace's objects`)
        const live = yield* callOn(yield* world(liveKeys), bearer(fullKey(sandboxKeys, kind)))
        expectRefused(live, 404, missing, `sandbox ${kind} key on live objects`)
        const sandbox = yield* callOn(yield* world(sandboxKeys), bearer(fullKey(liveKeys, kind)))
        expectRefused(sandbox, 404, missing, `live ${kind} key on sandbox objects`)
      }
    }
  })

/** Answers every webhook POST at once: `POST /v1/webhooks/:id/test` and deliveries never leave the machine. */
// webhooks' receivers answer 200; the refresh fixture's pages are plain text; no other page is reachable
const receiver = Fetcher.layerTest(
  () => Fetcher.response(200, "ok"),
  (request) =>
    request.url.startsWith("https://pages.example/")
      ? {
          _tag: "Response",
          status: 200,
          contentType: "text/plain",
          body: new TextEncoder().encode("The shop opens from nine to five."),
          url: request.url
        }
      : { _tag: "Failure", reason: "connect", message: `nothing answers ${request.url} here` }
)

layer(testServer({}, { fetcher: receiver }))("security matrix", (it) => {
  it("every endpoint of the contract is behind Authentication or listed as public with a reason", () => {
    const byId = new Map(contractEndpoints.map((e) => [e.id, e]))
    const unlisted = contractEndpoints.filter((e) => !e.authenticated && publicByDesign[e.id] === undefined)
    expect(
      unlisted.map((e) => `${e.label} (${e.id})`),
      `endpoints without Authentication: declare .middleware(Authentication) on their group, or list them in \`publicByDesign\` of ${thisFile} with why`
    ).toEqual([])
    const stale = Object.keys(publicByDesign).filter((id) => byId.get(id)?.authenticated !== false)
    expect(stale, "entries of `publicByDesign` that are not (or no longer) unauthenticated endpoints of the contract").toEqual([])
  })

  it("every kind of path parameter has a fixture, every non-empty body a sample", () => {
    const problems = contractEndpoints
      .filter((e) => e.authenticated)
      .flatMap((e) => [
        ...e.params.filter((p) => fixtures[p.kind] === undefined).map((p) => missingFixture(e, p)),
        ...(!e.bodyOptional && samples[e.id]?.body === undefined ? [`${e.label}: no \`samples["${e.id}"].body\``] : []),
        ...(!e.queryOptional && samples[e.id]?.query === undefined ? [`${e.label}: no \`samples["${e.id}"].query\``] : [])
      ])
    expect(problems).toEqual([])
    const unused = Object.keys(samples).filter((id) => !contractEndpoints.some((e) => e.id === id))
    expect(unused, "samples of endpoints the contract no longer has").toEqual([])
  })

  describe("public by design", () => {
    for (const id of ["system.health", "system.ready", "system.openapi"]) {
      const e = contractEndpoints.find((x) => x.id === id)
      if (e === undefined) continue
      it.effect(`${e.label} answers without a key`, () =>
        Effect.gen(function* () {
          const h = yield* Harness
          const reply = yield* h.call(e.method, e.path)
          expect(reply.status, reply.text).toBe(200)
        })
      )
    }
  })

  describe("authenticated", () => {
    for (const e of contractEndpoints.filter((x) => x.authenticated)) {
      it.effect(`${e.label} (${e.id})`, () => Effect.flatMap(Harness, (h) => runMatrix(h, e)))
    }
  })
})

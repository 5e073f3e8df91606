/**
 * Q&A categories through the typed client (so requests are checked against the
 * contract); raw calls only for bodies the client would refuse to send.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { CategoryExists, ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import { type AgentId, CategoryId, SourceId } from "../../schema/Ids.js"
import type { CreateCategory, CreateQa } from "../../schema/Qa.js"
import { QaRepo } from "../../src/qa/QaRepo.js"
import type { Client } from "../../src/sdk/index.js"
import { expectFailure } from "../support/expect.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { seedQa } from "./support.js"

const createAgent = (api: Client) =>
  Effect.map(api.agents.create({ payload: { type: "support", name: "Q&A bot" } }), (r) => r.data.id)

const createCategory = (api: Client, id: AgentId, payload: CreateCategory) =>
  Effect.map(api.qa.createCategory({ path: { id }, payload }), (r) => r.data)

/** Raw, for bodies the typed client would refuse to send. */
const createCategoryRaw = (h: HarnessShape, key: string, agent: string, body: Record<string, unknown>) =>
  h.call("POST", `/v1/agents/${agent}/categories`, { key, body })

const createQa = (api: Client, id: AgentId, payload: Partial<CreateQa> = {}) =>
  Effect.map(
    api.qa.create({
      path: { id },
      payload: { question: "How do I reset my password?", answer: "Use the link on the sign-in page.", ...payload }
    }),
    (r) => r.data
  )

const listNames = (api: Client, id: AgentId) =>
  Effect.map(api.qa.listCategories({ path: { id } }), (r) => r.data.map((c) => `${c.position}:${c.name}`))

layer(testServer())("categories", (it) => {
  it.effect("creates categories last or at a position, names unique ignoring case", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      // raw: the client would refuse to send an untrimmed name
      const first = yield* createCategoryRaw(h, ws.secretTest, agent, { name: " Billing ", description: "Invoices" })
      expect(first.status).toBe(201)
      expect(first.body.data).toMatchObject({
        object: "category",
        agent_id: agent,
        name: "Billing",
        description: "Invoices",
        position: 0
      })
      expect(first.body.data.id).toMatch(/^cat_[A-Za-z0-9]{8,64}$/)
      yield* createCategory(api, agent, { name: "Shipping" })
      const front = yield* createCategory(api, agent, { name: "Accounts", position: 0 })
      expect(front).toMatchObject({ position: 0, description: "" })
      const far = yield* createCategory(api, agent, { name: "Returns", position: 50 })
      expect(far.position).toBe(3)
      yield* createCategory(api, agent, { name: "Hardware", position: 2 })
      expect(yield* listNames(api, agent)).toEqual([
        "0:Accounts",
        "1:Billing",
        "2:Hardware",
        "3:Shipping",
        "4:Returns"
      ])

      const listed = yield* api.qa.listCategories({ path: { id: agent } })
      expect(listed.meta.pagination).toEqual({ has_more: false, next_cursor: null })

      const taken = yield* expectFailure(createCategory(api, agent, { name: "BILLING", position: 0 }), CategoryExists)
      expect(taken.param).toBe("name")
      // the refused insert moved nothing
      expect(yield* listNames(api, agent)).toHaveLength(5)
      expect((yield* listNames(api, agent))[0]).toBe("0:Accounts")
    })
  )

  it.effect("validates category bodies", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      // raw: these bodies break the contract on purpose
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [{}, "parameter_missing", "name"],
        [{ name: "" }, "parameter_invalid", "name"],
        [{ name: "x".repeat(101) }, "parameter_invalid", "name"],
        [{ name: "Ok", position: -1 }, "parameter_invalid", "position"],
        [{ name: "Ok", position: 1.5 }, "parameter_invalid", "position"],
        [{ name: "Ok", position: 100 }, "parameter_invalid", "position"],
        [{ name: "Ok", description: "d".repeat(1001) }, "parameter_invalid", "description"],
        [{ name: "Ok", colour: "red" }, "parameter_invalid", "colour"]
      ]
      for (const [body, code, param] of cases) {
        const reply = yield* createCategoryRaw(h, ws.secretTest, agent, body as Record<string, unknown>)
        expect(reply.status, JSON.stringify(body).slice(0, 60)).toBe(400)
        expect(reply.body.error, JSON.stringify(body).slice(0, 60)).toMatchObject({ code, param })
      }
      expect(yield* listNames(api, agent)).toEqual([])

      // an agent holds at most 100 categories
      const repo = yield* QaRepo
      yield* repo.createCategories(
        { workspaceId: ws.workspace.id, environment: "test" },
        agent,
        Array.from({ length: 100 }, (_, i) => ({ name: `Category ${i}`, description: "" }))
      )
      const full = yield* expectFailure(createCategory(api, agent, { name: "One more" }), ParameterInvalid)
      expect(full.param).toBe("name")
      expect(full.message).toContain("at most 100")
    }).pipe(Effect.provide(QaRepo.Default))
  )

  it.effect("renames, describes and moves a category; the others close up around it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      const ids: Record<string, CategoryId> = {}
      for (const name of ["A", "B", "C", "D"]) {
        ids[name] = (yield* createCategory(api, agent, { name })).id
      }
      const patch = (name: string, payload: Parameters<Client["qa"]["updateCategory"]>[0]["payload"]) =>
        Effect.map(api.qa.updateCategory({ path: { id: agent, category_id: ids[name]! }, payload }), (r) => r.data)

      const moved = yield* patch("A", { position: 2 })
      expect(moved).toMatchObject({ name: "A", position: 2 })
      expect(yield* listNames(api, agent)).toEqual(["0:B", "1:C", "2:A", "3:D"])
      yield* patch("D", { position: 0 })
      expect(yield* listNames(api, agent)).toEqual(["0:D", "1:B", "2:C", "3:A"])
      yield* patch("B", { position: 99 })
      expect(yield* listNames(api, agent)).toEqual(["0:D", "1:C", "2:A", "3:B"])

      const renamed = yield* patch("C", { name: "Billing", description: "Invoices and refunds" })
      expect(renamed).toMatchObject({ name: "Billing", description: "Invoices and refunds", position: 1 })
      yield* patch("C", { name: "BILLING" })
      const clash = yield* expectFailure(patch("A", { name: "billing", position: 0 }), CategoryExists)
      expect(clash.param).toBe("name")
      expect(yield* listNames(api, agent)).toEqual(["0:D", "1:BILLING", "2:A", "3:B"])

      const unknown = yield* expectFailure(
        api.qa.updateCategory({
          path: { id: agent, category_id: CategoryId.make("cat_000000000000000000000000") },
          payload: { name: "X" }
        }),
        ResourceMissing
      )
      expect(unknown.param).toBe("category_id")
      const other = yield* createAgent(api)
      yield* expectFailure(api.qa.deleteCategory({ path: { id: other, category_id: ids.A! } }), ResourceMissing)
    })
  )

  it.effect("deleting a category leaves its Q&A uncategorised and closes up the positions", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      const first = (yield* createCategory(api, agent, { name: "First" })).id
      const doomed = (yield* createCategory(api, agent, { name: "Doomed" })).id
      yield* createCategory(api, agent, { name: "Last" })
      const inside = (yield* createQa(api, agent, { category_id: doomed })).id
      const elsewhere = (yield* createQa(api, agent, { category_id: first })).id

      const path = { id: agent, category_id: doomed }
      const deleted = yield* api.qa.deleteCategory({ path })
      expect(deleted.data).toEqual({ id: doomed, object: "category", deleted: true })
      expect(yield* listNames(api, agent)).toEqual(["0:First", "1:Last"])

      const qa = (yield* api.qa.list({ path: { id: agent }, urlParams: {} })).data
      expect(qa.map((q) => [q.id, q.category_id])).toEqual([
        [elsewhere, first],
        [inside, null]
      ])
      yield* expectFailure(api.qa.deleteCategory({ path }), ResourceMissing)
    })
  )

  it.effect("concurrent creations get distinct, dense positions", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => createCategory(api, agent, { name: `C${i}`, position: 0 })),
        { concurrency: "unbounded" }
      )
      const positions = (yield* listNames(api, agent)).map((p) => Number(p.split(":")[0]))
      expect(positions).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      const same = yield* Effect.all(
        Array.from({ length: 4 }, () => Effect.either(createCategory(api, agent, { name: "Same" }))),
        { concurrency: "unbounded" }
      )
      expect(same.filter(Either.isRight)).toHaveLength(1)
      expect(same.filter(Either.isLeft).map((e) => e.left._tag)).toEqual(["CategoryExists", "CategoryExists", "CategoryExists"])
    })
  )

  it.effect("for ingestion: createCategories reuses names ignoring case and appends; deleteBySource keeps manual Q&A", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      yield* createCategory(api, agent, { name: "Billing" })
      const repo = yield* QaRepo
      const tenant = { workspaceId: ws.workspace.id, environment: "test" as const }
      const made = yield* repo.createCategories(tenant, agent, [
        { name: "Shipping", description: "Parcels" },
        { name: "billing", description: "ignored: the category exists" },
        { name: "Returns", description: "" },
        { name: "SHIPPING", description: "a repeat in the same call" }
      ])
      expect(made.map((c) => [c.name, c.position])).toEqual([
        ["Shipping", 1],
        ["Billing", 0],
        ["Returns", 2]
      ])
      expect((yield* repo.categoriesOf(tenant, agent)).map((c) => c.name)).toEqual(["Billing", "Shipping", "Returns"])

      const source = SourceId.make("src_bbbbbbbbbbbb")
      const other = SourceId.make("src_cccccccccccc")
      yield* seedQa(ws, agent, [
        { question: "G?", origin: "generated", sourceId: source },
        { question: "C?", origin: "csv", sourceId: source },
        { question: "M?", origin: "manual", sourceId: source },
        { question: "O?", origin: "generated", sourceId: other }
      ])
      expect(yield* repo.deleteBySource(tenant, source)).toBe(2)
      // another environment's rows of the same source id are out of reach
      expect(yield* repo.deleteBySource({ ...tenant, environment: "live" }, other)).toBe(0)
      const left = (yield* api.qa.list({ path: { id: agent }, urlParams: {} })).data
      expect(left.map((q) => q.question)).toEqual(["O?", "M?"])
    }).pipe(Effect.provide(QaRepo.Default))
  )
})


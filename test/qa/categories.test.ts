import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SourceId } from "../../schema/Ids.js"
import { QaRepo } from "../../src/qa/QaRepo.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, createCategory, createQa, seedQa } from "./support.js"

const listNames = (h: HarnessShape, key: string, agent: string) =>
  Effect.map(h.call("GET", `/v1/agents/${agent}/categories`, { key }), (r) =>
    r.body.data.map((c: any) => `${c.position}:${c.name}`)
  )

layer(testServer())("categories", (it) => {

  it.effect("creates categories last or at a position, names unique ignoring case", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const first = yield* createCategory(h, ws.secretTest, agent, { name: " Billing ", description: "Invoices" })
      expect(first.status).toBe(201)
      expect(first.body.data).toMatchObject({
        object: "category",
        agent_id: agent,
        name: "Billing",
        description: "Invoices",
        position: 0
      })
      expect(first.body.data.id).toMatch(/^cat_[A-Za-z0-9]{8,64}$/)
      yield* createCategory(h, ws.secretTest, agent, { name: "Shipping" })
      const front = yield* createCategory(h, ws.secretTest, agent, { name: "Accounts", position: 0 })
      expect(front.body.data).toMatchObject({ position: 0, description: "" })
      const far = yield* createCategory(h, ws.secretTest, agent, { name: "Returns", position: 50 })
      expect(far.body.data.position).toBe(3)
      yield* createCategory(h, ws.secretTest, agent, { name: "Hardware", position: 2 })
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual([
        "0:Accounts",
        "1:Billing",
        "2:Hardware",
        "3:Shipping",
        "4:Returns"
      ])

      const listed = yield* h.call("GET", `/v1/agents/${agent}/categories`, { key: ws.secretTest })
      expect(listed.body.meta.pagination).toEqual({ has_more: false, next_cursor: null })

      const taken = yield* createCategory(h, ws.secretTest, agent, { name: "BILLING", position: 0 })
      expect(taken.status).toBe(409)
      expect(taken.body.error).toMatchObject({ code: "category_exists", param: "name", type: "invalid_request" })
      // the refused insert moved nothing
      expect(yield* listNames(h, ws.secretTest, agent)).toHaveLength(5)
      expect((yield* listNames(h, ws.secretTest, agent))[0]).toBe("0:Accounts")
    })
  )

  it.effect("validates category bodies", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
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
        const reply = yield* createCategory(h, ws.secretTest, agent, body as Record<string, unknown>)
        expect(reply.status, JSON.stringify(body).slice(0, 60)).toBe(400)
        expect(reply.body.error, JSON.stringify(body).slice(0, 60)).toMatchObject({ code, param })
      }
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual([])

      // an agent holds at most 100 categories
      const repo = yield* QaRepo
      yield* repo.createCategories(
        { workspaceId: ws.workspace.id, environment: "test" },
        agent,
        Array.from({ length: 100 }, (_, i) => ({ name: `Category ${i}`, description: "" }))
      )
      const full = yield* createCategory(h, ws.secretTest, agent, { name: "One more" })
      expect(full.status).toBe(400)
      expect(full.body.error).toMatchObject({ code: "parameter_invalid", param: "name" })
      expect(full.body.error.message).toContain("at most 100")
    }).pipe(Effect.provide(QaRepo.Default))
  )

  it.effect("renames, describes and moves a category; the others close up around it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const ids: Record<string, string> = {}
      for (const name of ["A", "B", "C", "D"]) {
        ids[name] = (yield* createCategory(h, ws.secretTest, agent, { name })).body.data.id
      }
      const patch = (name: string, body: unknown) =>
        h.call("PATCH", `/v1/agents/${agent}/categories/${ids[name]}`, { key: ws.secretTest, body })

      const moved = yield* patch("A", { position: 2 })
      expect(moved.status).toBe(200)
      expect(moved.body.data).toMatchObject({ name: "A", position: 2 })
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual(["0:B", "1:C", "2:A", "3:D"])
      yield* patch("D", { position: 0 })
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual(["0:D", "1:B", "2:C", "3:A"])
      yield* patch("B", { position: 99 })
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual(["0:D", "1:C", "2:A", "3:B"])

      const renamed = yield* patch("C", { name: "Billing", description: "Invoices and refunds" })
      expect(renamed.body.data).toMatchObject({ name: "Billing", description: "Invoices and refunds", position: 1 })
      const ownCase = yield* patch("C", { name: "BILLING" })
      expect(ownCase.status).toBe(200)
      const clash = yield* patch("A", { name: "billing", position: 0 })
      expect(clash.status).toBe(409)
      expect(clash.body.error).toMatchObject({ code: "category_exists", param: "name" })
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual(["0:D", "1:BILLING", "2:A", "3:B"])

      const unknown = yield* h.call("PATCH", `/v1/agents/${agent}/categories/cat_000000000000000000000000`, {
        key: ws.secretTest,
        body: { name: "X" }
      })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatchObject({ code: "resource_missing", param: "category_id" })
      const other = yield* createAgent(h, ws.secretTest)
      const viaOther = yield* h.call("DELETE", `/v1/agents/${other}/categories/${ids.A}`, { key: ws.secretTest })
      expect(viaOther.status).toBe(404)
    })
  )

  it.effect("deleting a category leaves its Q&A uncategorised and closes up the positions", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const first = (yield* createCategory(h, ws.secretTest, agent, { name: "First" })).body.data.id
      const doomed = (yield* createCategory(h, ws.secretTest, agent, { name: "Doomed" })).body.data.id
      yield* createCategory(h, ws.secretTest, agent, { name: "Last" })
      const inside = (yield* createQa(h, ws.secretTest, agent, { category_id: doomed })).body.data.id
      const elsewhere = (yield* createQa(h, ws.secretTest, agent, { category_id: first })).body.data.id

      const deleted = yield* h.call("DELETE", `/v1/agents/${agent}/categories/${doomed}`, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      expect(deleted.body.data).toEqual({ id: doomed, object: "category", deleted: true })
      expect(yield* listNames(h, ws.secretTest, agent)).toEqual(["0:First", "1:Last"])

      const qa = (yield* h.call("GET", `/v1/agents/${agent}/qa`, { key: ws.secretTest })).body.data
      expect(qa.map((q: any) => [q.id, q.category_id])).toEqual([
        [elsewhere, first],
        [inside, null]
      ])
      const again = yield* h.call("DELETE", `/v1/agents/${agent}/categories/${doomed}`, { key: ws.secretTest })
      expect(again.status).toBe(404)
    })
  )

  it.effect("concurrent creations get distinct, dense positions", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const replies = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => createCategory(h, ws.secretTest, agent, { name: `C${i}`, position: 0 })),
        { concurrency: "unbounded" }
      )
      expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201))
      const positions = (yield* listNames(h, ws.secretTest, agent)).map((p: string) => Number(p.split(":")[0]))
      expect(positions).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      const same = yield* Effect.all(
        Array.from({ length: 4 }, () => createCategory(h, ws.secretTest, agent, { name: "Same" })),
        { concurrency: "unbounded" }
      )
      expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])
    })
  )

  it.effect("for ingestion: createCategories reuses names ignoring case and appends; deleteBySource keeps manual Q&A", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      yield* createCategory(h, ws.secretTest, agent, { name: "Billing" })
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
      const left = (yield* h.call("GET", `/v1/agents/${agent}/qa`, { key: ws.secretTest })).body.data
      expect(left.map((q: any) => q.question)).toEqual(["O?", "M?"])
    }).pipe(Effect.provide(QaRepo.Default))
  )
})


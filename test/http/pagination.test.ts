import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness, testServer } from "../support/harness.js"

layer(testServer())("pagination", (it) => {
  it.effect("45 agents in pages of 20: every agent once, newest first, no duplicates", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created: Array<string> = []
      for (let i = 0; i < 45; i++) {
        const r = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: `Agent ${i}` } })
        created.push(r.body.data.id)
      }
      const seen: Array<string> = []
      const pages: Array<number> = []
      let cursor: string | null = null
      for (let guard = 0; guard < 10; guard++) {
        const query: string = cursor === null ? "?limit=20" : `?limit=20&starting_after=${cursor}`
        const page = yield* h.call("GET", `/v1/agents${query}`, { key: ws.secretTest })
        expect(page.status).toBe(200)
        pages.push(page.body.data.length)
        seen.push(...page.body.data.map((a: any) => a.id))
        const { has_more, next_cursor } = page.body.meta.pagination
        expect(has_more).toBe(next_cursor !== null)
        if (!has_more) break
        cursor = next_cursor
      }
      expect(pages).toEqual([20, 20, 5])
      expect(seen).toEqual([...created].reverse())
      expect(new Set(seen).size).toBe(45)
    })
  )

  it.effect("a deleted agent does not break the cursor that points at it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      for (let i = 0; i < 3; i++) {
        yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: `N${i}` } })
      }
      const first = yield* h.call("GET", "/v1/agents?limit=1", { key: ws.secretTest })
      yield* h.call("DELETE", `/v1/agents/${first.body.data[0].id}`, { key: ws.secretTest })
      const rest = yield* h.call("GET", `/v1/agents?limit=5&starting_after=${first.body.meta.pagination.next_cursor}`, {
        key: ws.secretTest
      })
      expect(rest.body.data.map((a: any) => a.name)).toEqual(["N1", "N0"])
    })
  )

  it.effect("limit and cursor errors carry their own codes", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      for (const limit of ["0", "101", "abc", "-1", "1.5", ""]) {
        const r = yield* h.call("GET", `/v1/agents?limit=${limit}`, { key: ws.secretTest })
        expect(r.status, `limit=${limit}`).toBe(400)
        expect(r.body.error, `limit=${limit}`).toMatchObject({ code: "invalid_limit", param: "limit" })
      }
      for (const ok of ["1", "100"]) {
        expect((yield* h.call("GET", `/v1/agents?limit=${ok}`, { key: ws.secretTest })).status).toBe(200)
      }
      for (const cursor of ["garbage", "agt_123", Buffer.from("cur1:abc").toString("base64url"), "%00"]) {
        const r = yield* h.call("GET", `/v1/agents?starting_after=${cursor}`, { key: ws.secretTest })
        expect(r.status, cursor).toBe(400)
        expect(r.body.error, cursor).toMatchObject({ code: "invalid_cursor", param: "starting_after" })
      }
    })
  )

  it.effect("cursors are signed and bound to their list and filters; forged positions never reach SQL", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      for (let i = 0; i < 3; i++) {
        yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: `A${i}` } })
        yield* h.call("POST", "/v1/webhooks", {
          key: ws.secretTest,
          body: { url: `http://127.0.0.1:9/hook${i}`, events: ["agent.created"] }
        })
      }
      const agents = yield* h.call("GET", "/v1/agents?limit=1", { key: ws.secretTest })
      const agentsCursor: string = agents.body.meta.pagination.next_cursor
      expect((yield* h.call("GET", `/v1/agents?limit=1&starting_after=${agentsCursor}`, { key: ws.secretTest })).status).toBe(200)
      const expectInvalid = (r: { status: number; body: any }, label: string) => {
        expect(r.status, label).toBe(400)
        expect(r.body.error, label).toMatchObject({ code: "invalid_cursor", param: "starting_after" })
        expect(r.body.meta.request_id).toMatch(/^req_/)
      }
      expectInvalid(yield* h.call("GET", `/v1/webhooks?starting_after=${agentsCursor}`, { key: ws.secretTest }), "agents cursor on webhooks")
      // the unsigned form of earlier versions and forged positions, up to past 64 bits
      for (const seq of ["1", "9223372036854775807", "9223372036854775808", "99999999999999999999999"]) {
        const forged = Buffer.from(`cur1:${seq}`).toString("base64url")
        expectInvalid(yield* h.call("GET", `/v1/agents?starting_after=${forged}`, { key: ws.secretTest }), seq)
        const withMac = Buffer.from(`${seq}.${"A".repeat(22)}`).toString("base64url")
        expectInvalid(yield* h.call("GET", `/v1/agents?starting_after=${withMac}`, { key: ws.secretTest }), `${seq} with a made-up mac`)
      }
      // one flipped character of a real cursor
      const flipped = agentsCursor.slice(0, -1) + (agentsCursor.endsWith("A") ? "B" : "A")
      expectInvalid(yield* h.call("GET", `/v1/agents?starting_after=${flipped}`, { key: ws.secretTest }), "flipped")

      // ticket cursors hold only with the same filters (repeated values in any order count as the same)
      const agent = agents.body.data[0].id
      for (let i = 0; i < 3; i++) {
        yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body: { agent_id: agent, subject: `T${i}`, priority: "high" } })
      }
      const tickets = yield* h.call("GET", "/v1/tickets?limit=1&priority=high&priority=low", { key: ws.secretTest })
      const ticketsCursor: string = tickets.body.meta.pagination.next_cursor
      const same = yield* h.call("GET", `/v1/tickets?limit=1&priority=low&priority=high&starting_after=${ticketsCursor}`, { key: ws.secretTest })
      expect(same.status).toBe(200)
      expectInvalid(yield* h.call("GET", `/v1/tickets?limit=1&starting_after=${ticketsCursor}`, { key: ws.secretTest }), "filters dropped")
      expectInvalid(yield* h.call("GET", `/v1/tickets?priority=high&starting_after=${ticketsCursor}`, { key: ws.secretTest }), "filters changed")
    })
  )
})

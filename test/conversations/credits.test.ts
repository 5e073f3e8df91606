/**
 * Replies count against the plan and cost credits on live keys only, through
 * the real endpoints: `POST /v1/agents/{id}/messages` then `GET /v1/usage`.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Environment } from "../../schema/Auth.js"
import { WorkspaceId } from "../../schema/Ids.js"
import { monthlyReplyCap } from "../../src/usage/Plans.js"
import { Usage } from "../../src/usage/Usage.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { knowledgeableAgent } from "./support.js"

const reply = (h: HarnessShape, key: string, agentId: string, stream: boolean) =>
  h.call("POST", `/v1/agents/${agentId}/messages`, { key, body: { message: "How long does delivery take?", stream } })

const usageOf = (h: HarnessShape, key: string) => Effect.map(h.call("GET", "/v1/usage", { key }), (r) => r.body.data)

layer(testServer())("reply credits", (it) => {
  it.effect("10 live replies consume 10 credits; 10 sandbox replies consume none; both count as replies", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "pro" })
      for (const [key, credits] of [[ws.secretLive, 10], [ws.secretTest, 0]] as const) {
        const { agentId } = yield* knowledgeableAgent(h, key)
        for (let i = 0; i < 10; i++) {
          // streamed and plain replies cost the same
          const r = yield* reply(h, key, agentId, i % 2 === 0)
          expect(r.status).toBe(i % 2 === 0 ? 200 : 201)
        }
        const usage = yield* usageOf(h, key)
        expect(usage.replies.used).toBe(10)
        expect(usage.credits.consumed).toBe(credits)
      }
    })
  )

  it.effect("a plan whose replies are used up answers 402 before anything is stored or streamed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "free" })
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const tenant = { workspaceId: WorkspaceId.make(ws.workspace.id), environment: "test" as Environment }
      const cap = monthlyReplyCap.free!
      // all but one of the month's replies are used up
      for (let i = 0; i < cap - 1; i++) yield* usage.reserveReply(tenant)

      const last = yield* reply(h, ws.secretTest, agentId, false)
      expect(last.status).toBe(201)
      for (const stream of [true, false]) {
        const refused = yield* reply(h, ws.secretTest, agentId, stream)
        expect(refused.status).toBe(402)
        expect(refused.headers.get("content-type")).toMatch(/application\/json/)
        expect(refused.body.error.code).toBe("limit_reached")
      }
      // only the one conversation of the reply that was answered exists
      const conversations = (yield* h.call("GET", "/v1/conversations", { key: ws.secretTest })).body.data
      expect(conversations).toHaveLength(1)
      expect((yield* usageOf(h, ws.secretTest)).replies).toEqual({ used: cap, cap })
    })
  )
})

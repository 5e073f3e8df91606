/**
 * Which key creates which ticket origin: what the contract says (the OpenAPI document served to readers, the
 * payload field and the group's description) and what the server does must be the same rule.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { TicketOrigins } from "../../schema/Tickets.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, createTicket } from "./support.js"

layer(testServer())("ticket origins: the contract's word and the server's deed", (it) => {
  it.effect("the served descriptions give secret keys `api` only, and the server refuses a secret key any other origin", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "pro" })
      const document = (yield* h.call("GET", "/v1/openapi.json")).body
      const tag = document.tags.find((t: { description?: string }) => t.description?.includes("**Who may create what.**"))
      const originField = document.components.schemas.CreateTicket.properties.origin
      const texts: ReadonlyArray<string> = [tag.description, originField.description]
      for (const text of texts) {
        expect(text).toContain("Secret keys create origin `api` only")
        expect(text).toContain("widget keys create `widget_button` or `ai_escalation`")
        // no sentence lets a secret key set a widget's origin
        for (const sentence of text.split(/(?<=\.)\s/).filter((s) => /secret key/i.test(s))) {
          expect(sentence).not.toMatch(/may (also )?set|relay/i)
        }
      }
      expect(JSON.stringify(document)).not.toMatch(/Secret keys create origin `api` by default and may/)

      // the deed, for every origin and both kinds of key that may call the endpoint
      const agent_id = yield* createAgent(h, ws.secretTest)
      const allowed = { secret: ["api"], widget: ["widget_button", "ai_escalation"] } as const
      for (const [kind, key] of [["secret", ws.secretTest], ["widget", ws.widgetTest]] as const) {
        for (const origin of TicketOrigins) {
          const reply = yield* createTicket(h, key, { agent_id, origin })
          if ((allowed[kind] as ReadonlyArray<string>).includes(origin)) {
            expect(reply.status, `${kind} ${origin}`).toBe(201)
            expect(reply.body.data.origin).toBe(origin)
          } else {
            expect(reply.status, `${kind} ${origin}`).toBe(403)
            expect(reply.body.error, `${kind} ${origin}`).toMatchObject({
              type: "permission_error",
              code: "key_scope_mismatch",
              param: "origin",
              doc_url: expect.stringContaining("#key_scope_mismatch")
            })
          }
        }
      }
      // the defaults are the first of each list
      expect((yield* createTicket(h, ws.secretTest, { agent_id })).body.data.origin).toBe("api")
      expect((yield* createTicket(h, ws.widgetTest, { agent_id })).body.data.origin).toBe("widget_button")
    })
  )
})

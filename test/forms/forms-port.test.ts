/** `FORMS_PORT`: the same app on a second listener, the spec's `{forms_url}`. */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:net"
import { Harness, testServer } from "../support/harness.js"
import { goodFields, origin, withForm } from "./support.js"

/** A port that was free a moment ago (the listener binds it right after). */
const freePort = await new Promise<number>((resolve, reject) => {
  const probe = createServer()
  probe.once("error", reject)
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    probe.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
  })
})

layer(testServer({ secretKey: Redacted.make("forms-test-secret-key"), formsPort: freePort }))("forms port", (it) => {
  it.effect("serves the submit endpoint on FORMS_PORT as well as on the main port", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const reply = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${freePort}/api/forms/${formId}/submit`, {
          method: "POST",
          headers: { "service-api-key": ws.formsTest, origin, "content-type": "application/json" },
          body: JSON.stringify({ fields: goodFields })
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any, cors: r.headers.get("access-control-allow-origin") }))
      )
      expect(reply.status).toBe(201)
      expect(reply.body.data.ticket.public_id).toMatch(/^tck_/)
      expect(reply.cors).toBe(origin)
      expect(h.url).not.toContain(`:${freePort}`)
    })
  )
})

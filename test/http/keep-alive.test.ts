/**
 * Idle keep-alive connections: the service keeps one open longer than clients and load balancers commonly do (a
 * minute), and says so, so that it is never the side closing a connection just as a request is sent on it.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { request } from "node:http"
import { keepAliveMillis } from "../../src/http/NodeServer.js"
import { Harness, testServer } from "../support/harness.js"

/** The `Keep-Alive` and `Connection` headers of a plain HTTP/1.1 answer. */
const keepAliveHeaders = (url: string) =>
  Effect.promise(
    () =>
      new Promise<{ keepAlive: string | undefined; connection: string | undefined }>((resolve, reject) => {
        const req = request(`${url}/healthz`, { agent: false, headers: { connection: "keep-alive" } }, (res) => {
          res.resume()
          res.on("end", () => {
            resolve({ keepAlive: res.headers["keep-alive"] as string | undefined, connection: res.headers["connection"] })
            req.destroy()
          })
        })
        req.on("error", reject)
        req.end()
      })
  )

layer(testServer())("keep-alive", (it) => {
  it.effect("an idle connection is kept for a minute and more, and the answer says how long", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      expect(keepAliveMillis).toBeGreaterThan(60_000)
      const headers = yield* keepAliveHeaders(h.url)
      expect(headers.connection).toBe("keep-alive")
      expect(headers.keepAlive).toBe(`timeout=${keepAliveMillis / 1000}`)
    })
  )
})

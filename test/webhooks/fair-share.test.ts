/**
 * One workspace's receivers cannot stall another's deliveries: a workspace whose two subscriptions point at a
 * receiver that accepts connections and never answers holds at most its share of the dispatcher's slots
 * (`WEBHOOK_WORKSPACE_SHARE`, 12 of 16), so another workspace's deliveries to a healthy receiver are all made
 * while the first's are still in flight. Real HTTP on loopback; the response deadline (a real timer and the
 * TestClock's, which stands still here) is set far beyond the test, so the tarpit's attempts never end meanwhile.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type AddressInfo, createServer, type Server, type Socket } from "node:net"
import { defaultWebhookWorkspaceShare } from "../../src/webhooks/Dispatcher.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"

/** A TCP server on 127.0.0.1 that accepts every connection and never writes a byte; closed (its sockets too) with the scope. */
const tarpit = Effect.acquireRelease(
  Effect.async<{
    readonly server: Server
    readonly origin: string
    readonly open: Set<Socket>
    readonly accepted: () => number
  }>((resume) => {
    const open = new Set<Socket>()
    let accepted = 0
    const server = createServer((socket) => {
      accepted++
      open.add(socket)
      socket.on("close", () => open.delete(socket))
      // read and drop what is sent, answer nothing
      socket.on("data", () => {})
      socket.on("error", () => {})
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ origin: `http://127.0.0.1:${port}`, open, accepted: () => accepted, server }))
    })
  }),
  (pit) =>
    Effect.async<void>((resume) => {
      for (const socket of pit.open) socket.destroy()
      pit.server.close(() => resume(Effect.void))
    })
)

const subscribe = (h: HarnessShape, key: string, url: string) =>
  Effect.gen(function* () {
    const created = yield* h.call("POST", "/v1/webhooks", { key, body: { url, events: ["agent.updated"] } })
    expect(created.status).toBe(201)
    return created.body.data.id as string
  })

/** One agent of the workspace, renamed `times` times: as many `agent.updated` events. */
const renames = (h: HarnessShape, key: string, times: number) =>
  Effect.gen(function* () {
    const agent = yield* h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Renamed 0" } })
    expect(agent.status).toBe(201)
    for (let n = 1; n <= times; n++) {
      const renamed = yield* h.call("PATCH", `/v1/agents/${agent.body.data.id}`, { key, body: { name: `Renamed ${n}` } })
      expect(renamed.status).toBe(200)
    }
  })

const deliveriesOf = (h: HarnessShape, key: string, subscriptionId: string) =>
  Effect.map(
    h.call("GET", `/v1/webhooks/${subscriptionId}/deliveries?limit=100`, { key }),
    (r) => r.body.data as Array<{ status: string; attempt_count: number }>
  )

layer(testServer({ webhookResponseDeadlineMillis: 600_000 }))("webhooks: a workspace's share of the dispatcher (TestClock)", (it) => {
  it.scoped("a workspace whose receiver never answers holds its share of the slots; another's deliveries all go through meanwhile", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const pit = yield* tarpit
      const healthy = yield* loopbackServer((_, res) => void res.writeHead(200).end("thanks"))

      // the hostile workspace first: its 40 deliveries are due before the other's
      const hostile = yield* h.seed()
      const stuck = [
        yield* subscribe(h, hostile.secretTest, `${pit.origin}/one`),
        yield* subscribe(h, hostile.secretTest, `${pit.origin}/two`)
      ]
      yield* renames(h, hostile.secretTest, 20)
      yield* eventually(Effect.sync(() => pit.open.size), (n) => n === defaultWebhookWorkspaceShare, {
        label: "the tarpit holds the hostile workspace's share"
      })

      const good = yield* h.seed()
      const served = yield* subscribe(h, good.secretTest, `${healthy.origin}/hook`)
      yield* renames(h, good.secretTest, 5)
      const delivered = yield* eventually(
        deliveriesOf(h, good.secretTest, served),
        (ds) => ds.length === 5 && ds.every((d) => d.status === "succeeded"),
        { label: "the good workspace's deliveries made" }
      )
      expect(delivered.every((d) => d.attempt_count === 1)).toBe(true)
      expect(healthy.received).toHaveLength(5)

      // meanwhile the hostile workspace's attempts are still in flight, no more of them than its share, none ended
      expect(pit.open.size).toBe(defaultWebhookWorkspaceShare)
      expect(pit.accepted()).toBe(defaultWebhookWorkspaceShare)
      for (const id of stuck) {
        const ds = yield* deliveriesOf(h, hostile.secretTest, id)
        expect(ds).toHaveLength(20)
        expect(ds.every((d) => d.status === "pending" && d.attempt_count === 0)).toBe(true)
      }
    })
  )
})

import * as Headers from "@effect/platform/Headers"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { Idempotency } from "../../schema/Endpoint.js"
import { Authenticator, CurrentAuth } from "../../src/auth/Authentication.js"
import { IdempotencyLive } from "../../src/http/Idempotency.js"
import { Harness, testServer } from "../support/harness.js"

const countAgents = (workspaceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: string }>`select count(*) as n from agents where workspace_id = ${workspaceId}`
  ).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

layer(testServer())("idempotency", (it) => {
  it.effect("a replay returns the identical body with Idempotent-Replayed: true", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const send = h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Once" },
        headers: { "idempotency-key": "create-once-1" }
      })
      const first = yield* send
      const second = yield* send
      expect(first.status).toBe(201)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(second.headers.get("content-type")).toContain("application/json")
      expect(yield* countAgents(ws.workspace.id)).toBe(1)
    })
  )

  it.effect("the same key with another body is 422 idempotency_key_mismatch", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const headers = { "idempotency-key": "mismatch-1" }
      yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "A" }, headers })
      const other = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "B" }, headers })
      expect(other.status).toBe(422)
      expect(other.body.error).toMatchObject({ type: "idempotency_error", code: "idempotency_key_mismatch" })
      expect(yield* countAgents(ws.workspace.id)).toBe(1)
    })
  )

  it.effect("keys are scoped per workspace and environment", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const headers = { "idempotency-key": "shared-key" }
      const body = { type: "support", name: "Env" }
      const test = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body, headers })
      const live = yield* h.call("POST", "/v1/agents", { key: ws.secretLive, body, headers })
      expect(live.status).toBe(201)
      expect(live.body.data.id).not.toBe(test.body.data.id)
      // a second sandbox key of the same workspace shares the record
      const another = yield* ws.key({ kind: "secret" })
      const replay = yield* h.call("POST", "/v1/agents", { key: another.secret, body, headers })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.body.data.id).toBe(test.body.data.id)
    })
  )

  it.effect("a key that may not call the endpoint never gets another key's stored answer", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const headers = { "idempotency-key": "new-key-1" }
      const body = { kind: "secret", name: "deploy" }
      const created = yield* h.call("POST", "/v1/keys", { key: ws.secretTest, body, headers })
      expect(created.status).toBe(201)
      expect(created.body.data.secret).toMatch(/^sk_test_/)
      // the workspace's widget key, and a secret key without `write:keys`, send the same request
      const readOnly = yield* ws.key({ kind: "secret", scopes: ["read:agents"] })
      for (const key of [ws.widgetTest, readOnly.secret]) {
        const replay = yield* h.call("POST", "/v1/keys", { key, body, headers })
        expect(replay.status).toBe(403)
        expect(replay.body.error.code).toBe("key_scope_mismatch")
        expect(replay.text).not.toContain(created.body.data.secret)
        expect(replay.headers.get("idempotent-replayed")).toBeNull()
      }
      // the key that made it still gets its replay
      const again = yield* h.call("POST", "/v1/keys", { key: ws.secretTest, body, headers })
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body.data.secret).toBe(created.body.data.secret)
    })
  )

  it.effect("an answer showing a secret is kept sealed: its key gets it again, the database and other keys never", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sql = yield* SqlClient.SqlClient
      const stored = (key: string) =>
        Effect.orDie(sql<{ body: string; sealed: boolean }>`
          select response_body as body, response_sealed as sealed from idempotency_keys
          where workspace_id = ${ws.workspace.id} and key = ${key}`)
      const keysOf = Effect.orDie(sql<{ n: string }>`select count(*) as n from api_keys where workspace_id = ${ws.workspace.id}`)

      // a new key's value, a webhook's signing secret, the identity secret
      const requests = [
        { path: "/v1/keys", body: { kind: "secret", name: "deploy" }, secret: (b: any) => b.data.secret as string },
        {
          path: "/v1/webhooks",
          body: { url: "https://example.com/hooks", events: ["ticket.created"] },
          secret: (b: any) => b.data.secret as string
        },
        { path: "/v1/identity_secret/rotate", body: undefined, secret: (b: any) => b.data.secret as string }
      ]
      for (const [i, r] of requests.entries()) {
        const headers = { "idempotency-key": `sealed-${i}` }
        const first = yield* h.call("POST", r.path, { key: ws.secretTest, body: r.body, headers })
        expect(first.status, first.text).toBeLessThan(300)
        const secret = r.secret(first.body)
        expect(secret.length).toBeGreaterThan(10)
        const [row] = yield* stored(`sealed-${i}`)
        expect(row!.sealed).toBe(true)
        expect(row!.body).not.toContain(secret)
        const again = yield* h.call("POST", r.path, { key: ws.secretTest, body: r.body, headers })
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect(again.text).toBe(first.text)
      }

      // another key of the workspace, allowed to call the endpoint, cannot open it: refused, and nothing is made
      const before = Number((yield* keysOf)[0]!.n)
      const another = yield* ws.key({ kind: "secret" })
      const replay = yield* h.call("POST", "/v1/keys", { key: another.secret, body: requests[0]!.body, headers: { "idempotency-key": "sealed-0" } })
      expect(replay.status).toBe(422)
      expect(replay.body.error).toMatchObject({ code: "idempotency_key_mismatch", param: "Idempotency-Key" })
      expect(replay.body.error.message).toContain("another API key")
      expect(Number((yield* keysOf)[0]!.n)).toBe(before + 1)

      // an answer without a secret is kept as it is
      const agent = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Plain" },
        headers: { "idempotency-key": "plain-1" }
      })
      const [plain] = yield* stored("plain-1")
      expect(plain).toMatchObject({ sealed: false, body: agent.text })
    })
  )

  it.effect("20 concurrent requests with one key create exactly one agent", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const replies = yield* Effect.all(
        Array.from({ length: 20 }, () =>
          h.call("POST", "/v1/agents", {
            key: ws.secretTest,
            body: { type: "support", name: "Burst" },
            headers: { "idempotency-key": "burst-1" }
          })
        ),
        { concurrency: "unbounded" }
      )
      expect(yield* countAgents(ws.workspace.id)).toBe(1)
      const created = replies.filter((r) => r.status === 201)
      const busy = replies.filter((r) => r.status === 409)
      expect(created.length + busy.length).toBe(20)
      expect(new Set(created.map((r) => r.body.data.id)).size).toBe(1)
      for (const r of busy) expect(r.body.error.code).toBe("idempotency_request_in_progress")
    })
  )

  it.effect("after 24 hours (by the Clock) the key is free again", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const headers = { "idempotency-key": "ttl-1" }
      const first = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Day 1" }, headers })
      yield* TestClock.adjust("23 hours")
      const within = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Day 2" }, headers })
      expect(within.status).toBe(422)
      yield* TestClock.adjust("1 hour")
      const after = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Day 2" }, headers })
      expect(after.status).toBe(201)
      expect(after.headers.get("idempotent-replayed")).toBeNull()
      expect(after.body.data.id).not.toBe(first.body.data.id)
    })
  )

  it.effect("client errors are stored and replayed; malformed keys are refused", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const headers = { "idempotency-key": "bad-body-1" }
      const bad = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "nope", name: "x" }, headers })
      expect(bad.status).toBe(400)
      const again = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "nope", name: "x" }, headers })
      expect(again.status).toBe(400)
      expect(again.headers.get("idempotent-replayed")).toBe("true")

      const tooLong = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "x" },
        headers: { "idempotency-key": "k".repeat(256) }
      })
      expect(tooLong.status).toBe(400)
      expect(tooLong.body.error).toMatchObject({ code: "invalid_idempotency_key", param: "Idempotency-Key" })
    })
  )

  it.effect("server errors are not stored: the key can be retried", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sql = yield* SqlClient.SqlClient
      // make the next insert fail on our side: a trigger that raises
      yield* Effect.orDie(sql.unsafe(`
        create function fail_agents() returns trigger language plpgsql as $$
        begin raise exception 'boom'; end $$`))
      yield* Effect.orDie(sql.unsafe(`create trigger fail_agents before insert on agents for each row execute function fail_agents()`))
      const headers = { "idempotency-key": "retry-after-500" }
      const failed = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "R" }, headers })
      yield* Effect.orDie(sql.unsafe(`drop trigger fail_agents on agents`))
      expect(failed.status).toBe(500)
      expect(failed.body.error).toMatchObject({ type: "api_error", code: "internal_error" })
      expect(failed.text).not.toContain("boom")
      const retried = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "R" }, headers })
      expect(retried.status).toBe(201)
      expect(retried.headers.get("idempotent-replayed")).toBeNull()
    })
  )
})

/**
 * The middleware alone, as the router runs it: a request whose answer never goes out (its client gone before
 * the handler answered) frees its key when the request's scope closes; one whose answer goes out keeps it.
 */
layer(testServer())("idempotency middleware", (it) => {
  const run = (secret: string, key: string) =>
    Effect.gen(function* () {
      const middleware = yield* Effect.provide(Idempotency, IdempotencyLive)
      const auth = yield* (yield* Authenticator).resolve(Headers.fromInput({ authorization: `Bearer ${secret}` }))
      const request = HttpServerRequest.fromWeb(
        new Request("http://127.0.0.1/v1/agents", {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "idempotency-key": key, "content-type": "application/json" },
          body: JSON.stringify({ type: "support", name: "Gone" })
        })
      )
      const route: HttpRouter.RouteContext = {
        [HttpRouter.RouteContextTypeId]: HttpRouter.RouteContextTypeId,
        params: {},
        route: HttpRouter.makeRoute("POST", "/v1/agents", Effect.never)
      }
      return yield* middleware.pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Effect.provideService(HttpRouter.RouteContext, route),
        Effect.provideService(HttpServerRequest.ParsedSearchParams, {}),
        Effect.locally(CurrentAuth, Option.some(auth))
      )
    })

  it.effect("no answer out: the scope's close frees the key; an answer out: it is kept and replayed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      // the first run's answer never goes out: the next run owns the key again instead of a 409
      yield* Effect.scoped(run(ws.secretTest, "gone-1"))
      const answered = yield* Effect.scoped(
        Effect.gen(function* () {
          yield* run(ws.secretTest, "gone-1")
          const keep = Option.getOrThrow(yield* FiberRef.get(HttpApp.currentPreResponseHandlers))
          return yield* keep(HttpServerRequest.fromWeb(new Request("http://127.0.0.1/")), HttpServerResponse.unsafeJson({ kept: true }, { status: 201 }))
        })
      )
      expect(answered.status).toBe(201)
      // that answer went out, so it is what a retry gets
      const replayed = yield* Effect.exit(Effect.scoped(run(ws.secretTest, "gone-1")))
      const defect = Exit.isFailure(replayed) ? Option.getOrUndefined(Cause.dieOption(replayed.cause)) : undefined
      expect(HttpServerResponse.isServerResponse(defect)).toBe(true)
      if (HttpServerResponse.isServerResponse(defect)) {
        expect(defect.status).toBe(201)
        expect(defect.headers["idempotent-replayed"]).toBe("true")
      }
    })
  )
})

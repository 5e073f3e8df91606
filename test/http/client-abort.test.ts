/**
 * A write whose client hangs up still runs to its end. On PostgreSQL an
 * interrupted query is cancelled over another pooled connection; under load
 * that stalled every transaction queued behind its locks, so write routes are
 * uninterruptible. The test holds a lock the insert needs, lets the client
 * abort while the insert waits, releases the lock, and expects the row.
 * PGlite is one session (nothing runs beside the lock holder), so this runs on PostgreSQL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestServices from "effect/TestServices"
import { databaseKind } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"

layer(testServer())("client hang-ups", (it) => {
  it.effect.skipIf(databaseKind !== "postgres")("a POST whose client aborts mid-request still commits", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sql = yield* SqlClient.SqlClient
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        Effect.gen(function* () {
          yield* sql`lock table agents in share row exclusive mode`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        }).pipe(sql.withTransaction, Effect.orDie)
      )
      yield* Deferred.await(locked)

      const controller = new AbortController()
      const request = yield* Effect.fork(
        Effect.promise(() =>
          fetch(`${h.url}/v1/agents`, {
            method: "POST",
            headers: { authorization: `Bearer ${ws.secretTest}`, "content-type": "application/json" },
            body: JSON.stringify({ type: "support", name: "Survivor" }),
            signal: controller.signal
          }).then(
            (r) => r.status,
            () => "aborted" as const
          )
        )
      )
      // the insert is waiting on the lock
      yield* eventually(
        Effect.orDie(sql<{ n: string }>`
          select count(*) as n from pg_stat_activity
          where wait_event_type = 'Lock' and query ilike '%insert into agents%'`),
        (rows) => rows[0]!.n !== "0",
        { label: "insert blocked" }
      )
      controller.abort()
      expect(yield* Fiber.join(request)).toBe("aborted")
      // give the server the moment it needs to see the closed socket (it would interrupt the request then): a real
      // pause, as nothing the server exposes says it has seen a hang-up, and a request that ignores it changes nothing
      yield* TestServices.provideLive(Effect.sleep("200 millis"))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)

      const rows = yield* eventually(
        Effect.orDie(sql<{ name: string }>`select name from agents where workspace_id = ${ws.workspace.id}`),
        (rows) => rows.length === 1,
        { label: "agent committed" }
      )
      expect(rows[0]!.name).toBe("Survivor")
      const events = yield* Effect.orDie(
        sql<{ type: string }>`select type from events where workspace_id = ${ws.workspace.id}`
      )
      expect(events.map((e) => e.type)).toEqual(["agent.created"])
    })
  )
})

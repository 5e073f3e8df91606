/**
 * Boots the real service on a random loopback port with test layers (a fresh
 * database: PGlite in memory, or a throwaway PostgreSQL database when
 * DATABASE_URL is set) and gives tests the typed client of `Api` for ordinary
 * calls, raw HTTP calls for tests of the edge itself, and seeding helpers.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import type { Environment, Plan, Scope } from "../../schema/Auth.js"
import type { Workspace } from "../../schema/Admin.js"
import { layerLive as idsLive } from "../../layers/IdGenerator.js"
import * as Mailer from "../../layers/Mailer.js"
import * as Ai from "../../layers/Ai.js"
import type { Database } from "../../layers/Database.js"
import type { Decoders } from "../../layers/Decoders.js"
import * as Extractor from "../../layers/Extractor.js"
import * as Fetcher from "../../layers/Fetcher.js"
import * as FileStorage from "../../layers/FileStorage.js"
import * as Ocr from "../../layers/Ocr.js"
import { JobQueue } from "../../layers/JobQueue.js"
import * as RateLimitStore from "../../layers/RateLimitStore.js"
import { ApiKeys } from "../../src/auth/ApiKeys.js"
import type { AppConfigShape } from "../../src/Config.js"
import type { SourceTexts } from "../../src/qa/SourceTexts.js"
import { makeServer } from "../../src/Server.js"
import { type Client, type ClientOptions as SdkClientOptions, makeClient } from "../../src/sdk/index.js"
import { webhookQueue } from "../../src/webhooks/Dispatcher.js"
import { Workspaces } from "../../src/workspaces/Workspaces.js"
import { testDatabaseLayer } from "./database.js"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  /** Parsed JSON body, or the text when it is not JSON, or null when empty. */
  readonly body: any
  readonly text: string
}

export interface CallOptions {
  readonly key?: string | undefined
  /** Sent as JSON unless a string (sent as is). */
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /**
   * A success is read to its headers only, its body cancelled (an event stream that stays open, as a
   * conversation's `GET .../events`); a failure is read whole.
   */
  readonly untilHeaders?: boolean
}

export interface SeededWorkspace {
  readonly workspace: Workspace
  readonly secretTest: string
  readonly secretLive: string
  readonly widgetTest: string
  readonly formsTest: string
  /** A further key of `kind` with exactly these scopes. */
  readonly key: (options: {
    readonly kind: "secret" | "widget" | "forms"
    readonly environment?: Environment
    readonly scopes?: ReadonlyArray<Scope>
  }) => Effect.Effect<{ readonly id: string; readonly secret: string }>
  readonly revoke: (keyId: string) => Effect.Effect<void>
}

/** The SDK client's options besides the address and key (a key per call: `withIdempotencyKey` of the SDK). */
export type ClientOptions = Pick<SdkClientOptions, "idempotencyKeys">

export interface HarnessShape {
  readonly url: string
  /**
   * The typed client of `Api` for this server, authenticated with `key` (bearer):
   * successes decode to the contract's types (a status other than the declared
   * one fails), failures to the tagged errors of `schema/Errors.ts`.
   */
  readonly client: (key: string, options?: ClientOptions) => Effect.Effect<Client>
  /** Raw fetch, for tests of the edge itself: envelope, headers, input policy, malformed requests. */
  readonly call: (method: string, path: string, options?: CallOptions) => Effect.Effect<Reply>
  readonly seed: (options?: { readonly plan?: Plan }) => Effect.Effect<SeededWorkspace>
}

export class Harness extends Context.Tag("Test/Harness")<Harness, HarnessShape>() {}

export const testAdminToken = "test-admin-token-0123456789"

export const testConfig = (overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
  host: "127.0.0.1",
  port: 0,
  publicUrl: "http://127.0.0.1",
  dataDir: "./data-test-unused",
  databaseUrl: Option.none(),
  redisUrl: Option.none(),
  rateLimit: { rps: 10_000, burst: 10_000 },
  adminToken: Option.some(Redacted.make(testAdminToken)),
  // else rotating an identity secret would generate a key file under `dataDir`
  secretKey: Redacted.make("test-secret-key-0123456789"),
  ownerEmail: "owner@example.com",
  smtpUrl: Option.none(),
  mailFrom: "Assistant Platform <no-reply@test.local>",
  // like webhookPollMillis: the sender sleeps until the next due e-mail or a local enqueue
  emailPollMillis: 60 * 60 * 1000,
  announceKeys: false,
  ai: { provider: "local" },
  // under TestClock the worker sleeps until the next due job and local enqueues wake it; a poll (for other
  // instances' jobs) would only wake it once per period of every TestClock jump (a month's jump: 744 times)
  ingest: { concurrency: 2, fetchTimeoutMillis: 5_000, maxPageBytes: 2 * 1024 * 1024, pollMillis: 366 * 24 * 60 * 60 * 1000, leaseMillis: 60_000,
    extractTimeoutMillis: 30_000, extractMemoryMb: 256 },
  allowPrivateUrls: true,
  // under TestClock the dispatcher sleeps until the next due delivery; a short poll would wake it needlessly
  webhookPollMillis: 60 * 60 * 1000,
  webhookResponseDeadlineMillis: 10_000,
  webhookLeaseMillis: 30_000,
  // a job queued here wakes its worker at once: polling (for other instances' jobs) would only make
  // every TestClock jump wake it once per period, so it is longer than any jump a test makes
  qaRegeneratePollMillis: 366 * 24 * 60 * 60 * 1000,
  // a round per minute of TestClock time would run thousands of rounds when a test moves the clock by days
  maintenanceMillis: 366 * 24 * 60 * 60 * 1000,
  ...overrides
})

const HarnessLive = Layer.effect(
  Harness,
  Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const keys = yield* ApiKeys
    const workspaces = yield* Workspaces
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    const url = `http://127.0.0.1:${address.port}`
    const httpClient = yield* Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer)

    const client: HarnessShape["client"] = (key, options = {}) =>
      makeClient({ baseUrl: url, apiKey: key, ...options }).pipe(
        Effect.provideService(HttpClient.HttpClient, httpClient)
      )

    const call: HarnessShape["call"] = (method, path, options = {}) =>
      Effect.promise(async () => {
        const headers: Record<string, string> = { ...options.headers }
        if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
        let body: string | undefined
        if (options.body !== undefined) {
          body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
          headers["content-type"] ??= "application/json"
        }
        const response = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
        if (options.untilHeaders === true && response.ok) {
          await response.body?.cancel()
          return { status: response.status, headers: response.headers, body: null, text: "" }
        }
        const text = await response.text()
        let parsed: unknown = null
        if (text !== "") {
          try {
            parsed = JSON.parse(text)
          } catch {
            parsed = text
          }
        }
        return { status: response.status, headers: response.headers, body: parsed, text }
      })

    const seed: HarnessShape["seed"] = (options = {}) =>
      Effect.gen(function* () {
        const workspace = yield* workspaces.create({
          name: "Acme",
          owner_email: "owner@acme.test",
          plan: options.plan ?? "free"
        })
        const key: SeededWorkspace["key"] = (o) =>
          keys
            .create({ workspaceId: workspace.id, environment: o.environment ?? "test", kind: o.kind, scopes: o.scopes })
            .pipe(Effect.map((k) => ({ id: k.key.id, secret: k.secret })))
        return {
          workspace,
          secretTest: (yield* key({ kind: "secret" })).secret,
          secretLive: (yield* key({ kind: "secret", environment: "live" })).secret,
          widgetTest: (yield* key({ kind: "widget" })).secret,
          formsTest: (yield* key({ kind: "forms" })).secret,
          key,
          revoke: (id) => Effect.asVoid(keys.revoke(id as never))
        }
      })

    return { url, client, call, seed }
  })
)

/** Tests start on this date (under TestClock), before the service's fibers exist. */
export const testEpoch = Date.parse("2026-11-02T10:00:00Z")

/**
 * Moves a TestClock to `testEpoch` before anything sleeps on it: setting it later
 * would wake every periodic worker once per period since 1970. A second server
 * of one test (a restart on the same database) finds it there already, or later.
 */
const StartClock = Layer.effectDiscard(
  Effect.clockWith((clock) =>
    "setTime" in clock
      ? Effect.flatMap(TestClock.currentTimeMillis, (at) => (at < testEpoch ? TestClock.setTime(testEpoch) : Effect.void))
      : Effect.void
  )
)

/**
 * The service plus `Harness`, `SqlClient`, `MemoryMailbox` (what the service
 * e-mailed) and the app's services, for `layer(...)` of @effect/vitest.
 */
export const testServer = (
  overrides: Partial<AppConfigShape> = {},
  options: {
    /** How webhook POSTs leave: real HTTP by default, or a test layer that answers itself. */
    readonly fetcher?: Layer.Layer<Fetcher.Fetcher>
    /** The AI provider (default: `local`). */
    readonly ai?: Layer.Layer<Ai.Ai>
    /** Indexed source texts for Q&A regeneration (default: the service's own). */
    readonly sourceTexts?: Layer.Layer<SourceTexts>
    /** Text every image "contains" (the fixed OCR layer) unless a test needs the real `layerDecoders`. */
    readonly ocr?: Layer.Layer<Ocr.Ocr, never, Decoders>
    /** How documents are read (default: the service's decoder processes). */
    readonly extractor?: Layer.Layer<Extractor.Extractor, never, Decoders>
    /** The database (default: a fresh one); several servers given one are instances of one deployment. */
    readonly database?: Layer.Layer<SqlClient.SqlClient | Database, SqlError>
  } = {}
) => {
  // one mailbox per server: this reference is built once, for the server and the test
  const mailer = Layer.suspend(() => Mailer.layerMemory)
  return HarnessLive.pipe(
    Layer.provideMerge(
      makeServer({
        config: testConfig(overrides),
        database: options.database ?? testDatabaseLayer,
        rateLimitStore: RateLimitStore.layerMemory,
        ids: idsLive,
        mailer,
        fetcher: options.fetcher ?? Fetcher.layerNode,
        ai: options.ai ?? Ai.layerLocal,
        ocr: options.ocr ?? Ocr.layerFixed("text read from the image"),
        fileStorage: FileStorage.layerMemory,
        ...(options.sourceTexts === undefined ? {} : { sourceTexts: options.sourceTexts }),
        ...(options.extractor === undefined ? {} : { extractor: options.extractor })
      })
    ),
    Layer.provideMerge(mailer),
    Layer.provide(StartClock)
  )
}

export type TestServerServices = Layer.Layer.Success<ReturnType<typeof testServer>> | SqlClient.SqlClient

/**
 * Test probe: drives the webhook dispatcher until it has nothing in flight and
 * nothing due, so a "nothing more was sent" check asserts after it had its
 * chance to send.
 */
export const dispatcherIdle = Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(webhookQueue))

import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { type AddressInfo, type Server, createServer } from "node:net"
import { SMTPServer } from "smtp-server"
import { Mailer, MemoryMailbox, layerSmtp } from "../../layers/Mailer.js"
import { Emails, emailQueue, maxAttempts, retryDelaysMillis } from "../../src/email/Emails.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { Harness, testServer } from "../support/harness.js"

// SMTP: nodemailer against a real SMTP server on loopback

interface Received {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** An SMTP server on 127.0.0.1 (random port) that keeps every message; refuses `refused@...`. */
const smtpServer = Effect.gen(function* () {
  const received: Array<Received> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith("refused@")) {
        const error = Object.assign(new Error("mailbox unavailable"), { responseCode: 550 })
        return callback(error)
      }
      callback()
    },
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8")
        })
        callback()
      })
    }
  })
  const port = yield* Effect.acquireRelease(
    Effect.async<number>((resume) => {
      const listening = server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed((listening.address() as AddressInfo).port))
      )
    }),
    () => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
  )
  return { port, received }
})

describe("layerSmtp", () => {
  it.scopedLive("delivers through a real SMTP server: envelope, subject and body arrive", () =>
    Effect.gen(function* () {
      const smtp = yield* smtpServer
      const mailer = yield* Layer.build(
        layerSmtp({ url: `smtp://127.0.0.1:${smtp.port}`, from: "Assistant Platform <no-reply@platform.test>" })
      ).pipe(Effect.map(Context.get(Mailer)))
      yield* mailer.send({
        to: "owner@acme.test",
        subject: "Your webhook endpoint was disabled",
        text: "Hello,\n\nwe stopped sending events to https://acme.test/hooks.",
        html: "<p>Hello, we stopped sending events.</p>"
      })
      expect(smtp.received).toHaveLength(1)
      const message = smtp.received[0]!
      expect(message.from).toBe("no-reply@platform.test")
      expect(message.to).toEqual(["owner@acme.test"])
      expect(message.raw).toMatch(/^Subject: Your webhook endpoint was disabled\r?$/m)
      expect(message.raw).toMatch(/^To: owner@acme\.test\r?$/m)
      expect(message.raw).toMatch(/^From: Assistant Platform <no-reply@platform\.test>\r?$/m)
      expect(message.raw).toContain("we stopped sending events to https://acme.test/hooks.")
      expect(message.raw).toContain("<p>Hello, we stopped sending events.</p>")
    })
  )

  it.scopedLive("a refusal or an unreachable server is a MailDeliveryError with the reason", () =>
    Effect.gen(function* () {
      const smtp = yield* smtpServer
      const send = (url: string) =>
        Effect.flatMap(Mailer, (mailer) => mailer.send({ to: "refused@acme.test", subject: "x", text: "x" })).pipe(
          Effect.provide(layerSmtp({ url, from: "no-reply@platform.test" })),
          Effect.flip
        )
      const refused = yield* send(`smtp://127.0.0.1:${smtp.port}`)
      expect(refused._tag).toBe("MailDeliveryError")
      expect(refused.reason).toContain("550")
      expect(smtp.received).toHaveLength(0)

      // a server that hangs up at once
      const hangUp = yield* Effect.acquireRelease(
        Effect.async<Server>((resume) => {
          const server = createServer((socket) => {
            socket.destroy()
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const dropped = yield* send(`smtp://127.0.0.1:${(hangUp.address() as AddressInfo).port}`)
      expect(dropped._tag).toBe("MailDeliveryError")
      expect(dropped.reason).toMatch(/close/i)
    })
  )
})

// The queue, through the real server on TestClock

interface EmailRow {
  readonly id: string
  readonly workspace_id: string | null
  readonly to_address: string
  readonly subject: string
  readonly body_text: string
  readonly body_html: string | null
  readonly status: "pending" | "sent" | "failed"
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly locked_until: Date | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly sent_at: Date | null
}

const rowsTo = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<EmailRow>`select * from emails where to_address = ${address}`).pipe(
    Effect.orDie
  )

const rowTo = (address: string) =>
  Effect.map(rowsTo(address), (rows) => {
    expect(rows).toHaveLength(1)
    return rows[0]!
  })

const mailTo = (address: string) =>
  Effect.map(MemoryMailbox, (m) => m.sent).pipe(
    Effect.flatten,
    Effect.map((sent) => sent.filter((message) => message.to === address))
  )

const ms = (d: Date | string | null) => (d === null ? null : new Date(d).getTime())

/** One turn of the event loop (not a timer): lets the worker fiber's I/O progress. */
const turn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * The database state a background fiber is expected to reach, polled a bounded
 * number of times (each poll is a query plus an event-loop turn; no clock moves).
 */
const eventually = <A>(read: Effect.Effect<A, never, SqlClient.SqlClient | MemoryMailbox>, done: (a: A) => boolean) =>
  Effect.gen(function* () {
    let last = yield* read
    for (let i = 0; i < 2000 && !done(last); i++) {
      yield* turn
      last = yield* read
    }
    return last
  })

const at = Effect.map(Clock.currentTimeMillis, Number)

/** The e-mail sender has nothing due and nothing in flight: what follows a "nothing more was sent" check. */
const senderIdle = Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(emailQueue))

layer(testServer())("emails", (it) => {
  it.effect("an e-mail written by another instance (no local enqueue) is found by the next poll", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t0 = new Date(yield* at)
      yield* sql`
        insert into emails (id, to_address, subject, body_text, status, attempts, next_attempt_at, created_at)
        values ('eml_fromanotherinstance0001', 'polled@acme.test', 'Polled', 'found by the poll', 'pending', 0, ${t0}, ${t0})`
      // and its job, as that instance's enqueue writes it
      yield* sql`
        insert into jobs (queue, payload, status, run_at, created_at)
        values (${emailQueue}, ${JSON.stringify({ emailId: "eml_fromanotherinstance0001" })}, 'pending', ${t0}, ${t0})`
      // nothing rang the local sender; its poll (hourly on the test server: emailPollMillis) finds the row.
      // Each look moves the clock an hour: a sender still starting up may begin its sleep after a single move.
      const polled = yield* eventually(
        Effect.zipRight(TestClock.adjust("1 hour"), rowTo("polled@acme.test")),
        (r) => r.status === "sent"
      )
      expect(polled.status).toBe("sent")
      expect(yield* mailTo("polled@acme.test")).toHaveLength(1)
    })
  )

  it.effect("enqueue in a transaction that fails leaves no row and sends nothing", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const emails = yield* Emails
      const failed = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* emails.enqueue({ to: "rolled-back@acme.test", subject: "Never", text: "never sent" })
            return yield* Effect.fail("the change failed" as const)
          })
        )
        .pipe(Effect.flip)
      expect(failed).toBe("the change failed")
      expect(yield* rowsTo("rolled-back@acme.test")).toHaveLength(0)

      // a committed marker shows the sender has run since
      yield* sql.withTransaction(emails.enqueue({ to: "marker@acme.test", subject: "Marker", text: "marker" }))
      yield* TestClock.adjust("1 second")
      expect((yield* eventually(rowTo("marker@acme.test"), (r) => r.status === "sent")).status).toBe("sent")
      expect(yield* mailTo("marker@acme.test")).toHaveLength(1)
      expect(yield* mailTo("rolled-back@acme.test")).toHaveLength(0)
    })
  )

  it.effect("a committed e-mail is delivered by the email-sender worker one second later", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const sql = yield* SqlClient.SqlClient
      const emails = yield* Emails
      const ws = yield* h.seed()
      const t0 = yield* at
      const id = yield* sql.withTransaction(
        emails.enqueue({
          to: "owner@acme.test",
          subject: "Welcome",
          text: "Your workspace is ready.",
          html: "<p>Your workspace is ready.</p>",
          workspaceId: ws.workspace.id
        })
      )
      expect(id).toMatch(/^eml_[0-9A-Za-z]{24}$/)
      const queued = yield* rowTo("owner@acme.test")
      expect(queued).toMatchObject({
        id,
        workspace_id: ws.workspace.id,
        subject: "Welcome",
        body_text: "Your workspace is ready.",
        body_html: "<p>Your workspace is ready.</p>",
        status: "pending",
        attempts: 0,
        locked_until: null,
        last_error: null,
        sent_at: null
      })
      expect(ms(queued.created_at)).toBe(t0)
      expect(ms(queued.next_attempt_at)).toBe(t0)
      expect(yield* mailTo("owner@acme.test")).toHaveLength(0)

      yield* TestClock.adjust("1 second")
      const sent = yield* eventually(rowTo("owner@acme.test"), (r) => r.status === "sent")
      expect(sent).toMatchObject({ status: "sent", attempts: 1, locked_until: null, last_error: null })
      expect(ms(sent.sent_at)).toBe(t0 + 1000)
      expect(yield* mailTo("owner@acme.test")).toEqual([
        {
          to: "owner@acme.test",
          subject: "Welcome",
          text: "Your workspace is ready.",
          html: "<p>Your workspace is ready.</p>"
        }
      ])
    })
  )

  it.effect("a failing mailer is retried after 1 min, then 5 min, then the e-mail is sent", () =>
    Effect.gen(function* () {
      const emails = yield* Emails
      const mailbox = yield* MemoryMailbox
      const to = "retry@acme.test"
      yield* mailbox.failNext(2)
      const t0 = yield* at
      yield* emails.enqueue({ to, subject: "Retry", text: "eventually" })

      // attempt 1, now: fails, due again at +1 min
      yield* emails.dispatchDue()
      const first = yield* eventually(rowTo(to), (r) => r.attempts === 1)
      expect(first).toMatchObject({ status: "pending", attempts: 1, locked_until: null })
      expect(first.last_error).toContain("simulated failure")
      expect(ms(first.next_attempt_at)).toBe(t0 + 60_000)

      // not before its time
      yield* TestClock.adjust("59 seconds")
      expect((yield* emails.dispatchDue()).claimed).toBe(0)
      expect((yield* rowTo(to)).attempts).toBe(1)

      // attempt 2 at +1 min: fails, due again 5 min later
      yield* TestClock.adjust("1 second")
      yield* emails.dispatchDue()
      const second = yield* eventually(rowTo(to), (r) => r.attempts === 2)
      expect(second).toMatchObject({ status: "pending", attempts: 2, locked_until: null })
      expect(ms(second.next_attempt_at)).toBe(t0 + 60_000 + 5 * 60_000)

      yield* TestClock.adjust("4 minutes")
      expect((yield* emails.dispatchDue()).claimed).toBe(0)
      yield* senderIdle
      expect(yield* mailTo(to)).toHaveLength(0)

      // attempt 3 at +6 min: sent
      yield* TestClock.adjust("1 minute")
      yield* emails.dispatchDue()
      const sent = yield* eventually(rowTo(to), (r) => r.status === "sent")
      expect(sent).toMatchObject({ status: "sent", attempts: 3, locked_until: null })
      expect(ms(sent.sent_at)).toBe(t0 + 6 * 60_000)
      expect(yield* mailTo(to)).toHaveLength(1)
    })
  )

  it.effect(`after ${maxAttempts} failed attempts the e-mail is failed and never retried`, () =>
    Effect.gen(function* () {
      const emails = yield* Emails
      const mailbox = yield* MemoryMailbox
      const to = "hopeless@acme.test"
      yield* mailbox.failNext(maxAttempts)
      yield* emails.enqueue({ to, subject: "Hopeless", text: "never arrives" })
      expect(retryDelaysMillis).toEqual([60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000])

      yield* emails.dispatchDue()
      let row = yield* eventually(rowTo(to), (r) => r.attempts === 1)
      for (const [i, delay] of retryDelaysMillis.entries()) {
        const dueAt = ms(row.next_attempt_at)!
        expect(dueAt - (yield* at)).toBe(delay)
        yield* TestClock.adjust(delay)
        yield* emails.dispatchDue()
        row = yield* eventually(rowTo(to), (r) => r.attempts === i + 2)
      }
      expect(row).toMatchObject({ status: "failed", attempts: maxAttempts, locked_until: null, sent_at: null })
      expect(row.last_error).toContain("simulated failure")

      // a failed e-mail stays failed, even when the mailer works again
      yield* mailbox.failNext(0)
      yield* TestClock.adjust("1 day")
      yield* emails.dispatchDue()
      yield* senderIdle
      expect((yield* rowTo(to)).status).toBe("failed")
      expect(yield* mailTo(to)).toHaveLength(0)
    })
  )

  it.effect("a lease left by a crashed sender blocks the row until it lapses, then the next dispatch sends it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const emails = yield* Emails
      const t0 = yield* at
      // as if another instance claimed both (the lease is on the e-mail's job) and died mid-send
      const leaseJobOf = (emailId: string, until: Date) =>
        sql`
          update jobs set locked_until = ${until}, claims = claims + 1
          where queue = ${emailQueue} and payload = ${JSON.stringify({ emailId })}`
      yield* sql.withTransaction(
        Effect.gen(function* () {
          const leased = yield* emails.enqueue({ to: "leased@acme.test", subject: "Leased", text: "held by a dead sender" })
          const lapsed = yield* emails.enqueue({ to: "lapsed@acme.test", subject: "Lapsed", text: "lease already over" })
          yield* leaseJobOf(leased, new Date(t0 + 30_000))
          yield* leaseJobOf(lapsed, new Date(t0 - 1_000))
        })
      )

      yield* emails.dispatchDue()
      expect((yield* eventually(rowTo("lapsed@acme.test"), (r) => r.status === "sent")).status).toBe("sent")
      yield* senderIdle
      expect((yield* rowTo("leased@acme.test")).status).toBe("pending")
      expect(yield* mailTo("leased@acme.test")).toHaveLength(0)

      yield* TestClock.adjust("30 seconds")
      yield* emails.dispatchDue()
      const sent = yield* eventually(rowTo("leased@acme.test"), (r) => r.status === "sent")
      expect(sent).toMatchObject({ status: "sent", attempts: 1, locked_until: null })
      expect(yield* mailTo("leased@acme.test")).toHaveLength(1)
      expect(yield* mailTo("lapsed@acme.test")).toHaveLength(1)
    })
  )

  it.effect("concurrent dispatchers claim each e-mail once", () =>
    Effect.gen(function* () {
      const emails = yield* Emails
      const addresses = Array.from({ length: 12 }, (_, i) => `burst-${i}@acme.test`)
      for (const to of addresses) yield* emails.enqueue({ to, subject: "Burst", text: to })
      yield* Effect.all(
        Array.from({ length: 4 }, () => emails.dispatchDue(5)),
        { concurrency: "unbounded" }
      )
      yield* TestClock.adjust("1 second")
      for (const to of addresses) {
        expect((yield* eventually(rowTo(to), (r) => r.status === "sent")).attempts).toBe(1)
        expect(yield* mailTo(to)).toHaveLength(1)
      }
    })
  )
})

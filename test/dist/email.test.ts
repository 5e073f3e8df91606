/**
 * E-mail through the bundle: a server started with SMTP_URL (nodemailer is
 * loaded from a lazy chunk when the mailer is built, at start) sends the
 * owner's notice of a new ticket to a real SMTP server on 127.0.0.1.
 * Its own server: SMTP_URL changes how the service starts.
 */
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cleanupAll,
  bootstrapWorkspace,
  databaseName,
  eventually,
  expectCall,
  host,
  type Service,
  setupTimeout,
  startService,
  type Workspace
} from "./support.js"

interface Mail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** An SMTP server on 127.0.0.1 that keeps every message (no TLS, no auth). */
const startSmtp = () =>
  new Promise<{ readonly port: number; readonly mails: Array<Mail>; readonly close: () => Promise<void> }>((resolve) => {
    const mails: Array<Mail> = []
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          mails.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString("utf8")
          })
          callback()
        })
      }
    })
    const listening = server.listen(0, host, () =>
      resolve({
        port: (listening.address() as AddressInfo).port,
        mails,
        close: () => new Promise<void>((done) => server.close(() => done()))
      })
    )
  })

const ownerEmail = "owner@email-e2e.test"
let smtp: Awaited<ReturnType<typeof startSmtp>>
let service: Service | undefined
let ws: Workspace
/** Why the service did not start, if it did not: each test fails with it. */
let startFailure: Error | undefined

beforeAll(async () => {
  smtp = await startSmtp()
  try {
    service = await startService({
      SMTP_URL: `smtp://${host}:${smtp.port}`, MAIL_FROM: "Assistant Platform <no-reply@platform.test>",
      OWNER_EMAIL: ownerEmail
    })
    ws = await bootstrapWorkspace(service)
  } catch (error) {
    startFailure = error as Error
  }
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
  await smtp?.close()
})

describe(`e-mail through the bundle (${databaseName})`, () => {
  it("a service with SMTP_URL starts", () => {
    if (startFailure !== undefined) throw startFailure
  })

  it("a new ticket's owner e-mail reaches a real SMTP server (nodemailer)", async () => {
    if (startFailure !== undefined || service === undefined) throw new Error(`the service did not start: ${startFailure?.message}`)
    const running = service
    const agent = await expectCall(running, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "support", name: "Mail desk" } })
    const ticket = await expectCall(running, "POST", "/v1/tickets", 201, {
      key: ws.secret,
      body: { agent_id: agent.data.id, subject: "Broken kiln door", body: "The door does not close.", visitor_email: "visitor@example.com" }
    })
    const publicId = ticket.data.public_id as string
    const mails = await eventually(
      async () => smtp.mails,
      (all) => all.some((m) => m.raw.includes(publicId)),
      { label: `owner e-mail about ${publicId}`, tries: 200, intervalMs: 100, timeoutMs: 20_000 }
    ).catch((error: Error) => {
      const errors = running
        .output()
        .split("\n")
        .filter((line) => line.includes(`"level":"error"`) || /mail|smtp/i.test(line))
        .slice(-3)
        .join("\n")
      throw new Error(`${error.message}\nservice log:\n${errors}`)
    })
    const mail = mails.find((m) => m.raw.includes(publicId))!
    expect(mail.from).toBe("no-reply@platform.test")
    expect(mail.to).toEqual([ownerEmail])
    expect(mail.raw).toMatch(/^From: Assistant Platform <no-reply@platform\.test>\r?$/m)
    expect(mail.raw).toMatch(/^To: owner@email-e2e\.test\r?$/m)
  })
})

/**
 * Sends e-mail. Implementations side by side: SMTP (nodemailer, `SMTP_URL`),
 * log (embedded default: the message goes to the log, nothing leaves the
 * machine) and memory (tests: keeps what was sent, can be told to fail).
 *
 * Programs never call this directly: they enqueue with `Emails.enqueue` inside
 * their transaction, and the e-mail sender fiber delivers with retries.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html?: string | undefined
}

/** A message could not be handed to the mail server. Infrastructure: never in an HTTP response. */
export class MailDeliveryError extends Schema.TaggedError<MailDeliveryError>()("MailDeliveryError", {
  reason: Schema.String
}) {}

export interface MailerShape {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailDeliveryError>
}

export class Mailer extends Context.Tag("Layers/Mailer")<Mailer, MailerShape>() {}

// SMTP

/**
 * Defaults (milliseconds) keeping one attempt well inside the sender's 60 s
 * lease; a query parameter of the same name in the URL wins.
 */
const smtpTimeouts = { connectionTimeout: "10000", greetingTimeout: "10000", socketTimeout: "30000" }

const reasonOf = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code
    return typeof code === "string" && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message
  }
  return String(cause)
}

/**
 * nodemailer over `smtp://[user:pass@]host[:port]` (STARTTLS when offered) or
 * `smtps://` (TLS from the start). Options such as `?tls.rejectUnauthorized=false`
 * go in the query, as nodemailer reads them. The transport closes with the layer.
 */
export const layerSmtp = (options: { readonly url: string; readonly from: string }): Layer.Layer<Mailer> =>
  Layer.scoped(
    Mailer,
    Effect.gen(function* () {
      const url = yield* Effect.try({
        try: () => new URL(options.url),
        catch: () => "SMTP_URL is not a valid URL"
      }).pipe(Effect.orDieWith((message) => new Error(message)))
      if (url.protocol !== "smtp:" && url.protocol !== "smtps:") {
        return yield* Effect.dieMessage("SMTP_URL must start with smtp:// or smtps://")
      }
      for (const [name, value] of Object.entries(smtpTimeouts)) {
        if (!url.searchParams.has(name)) url.searchParams.set(name, value)
      }
      // loaded here: a service that logs its e-mails never loads nodemailer
      const { createTransport } = yield* Effect.promise(() => import("./mailer/Smtp.js"))
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => createTransport(url.toString())),
        (transport) => Effect.sync(() => transport.close())
      )
      return Mailer.of({
        send: (message) =>
          Effect.tryPromise({
            try: () =>
              transport.sendMail({
                from: options.from,
                to: message.to,
                subject: message.subject,
                text: message.text,
                ...(message.html === undefined ? {} : { html: message.html })
              }),
            catch: (cause) => new MailDeliveryError({ reason: reasonOf(cause) })
          }).pipe(
            Effect.flatMap((info) =>
              info.rejected.length > 0
                ? Effect.fail(new MailDeliveryError({ reason: `recipient rejected: ${info.response}` }))
                : Effect.void
            ),
            Effect.withSpan("Mailer.send")
          )
      })
    })
  )

// Log

/** Embedded default without `SMTP_URL`: every message is written to the log, never sent. */
export const layerLog = (options: { readonly from: string }): Layer.Layer<Mailer> =>
  Layer.succeed(
    Mailer,
    Mailer.of({
      send: (message) =>
        Effect.logInfo(`e-mail (not sent: SMTP_URL is unset)\n\n${message.text}`).pipe(
          Effect.annotateLogs({ mail_from: options.from, mail_to: message.to, mail_subject: message.subject })
        )
    })
  )

// Memory

export interface MemoryMailboxShape {
  /** Every message delivered so far, oldest first. */
  readonly sent: Effect.Effect<ReadonlyArray<MailMessage>>
  /** The next `count` sends fail with a `MailDeliveryError` (and are not recorded). */
  readonly failNext: (count: number) => Effect.Effect<void>
  /** Forget delivered messages and pending failures. */
  readonly clear: Effect.Effect<void>
}

export class MemoryMailbox extends Context.Tag("Layers/MemoryMailbox")<MemoryMailbox, MemoryMailboxShape>() {}

/** Tests: delivery into memory, readable through `MemoryMailbox`. */
export const layerMemory: Layer.Layer<Mailer | MemoryMailbox> = Layer.effectContext(
  Effect.gen(function* () {
    const sent = yield* Ref.make<ReadonlyArray<MailMessage>>([])
    const failures = yield* Ref.make(0)
    const mailer = Mailer.of({
      send: (message) =>
        Ref.modify(failures, (n) => (n > 0 ? [true, n - 1] : [false, 0])).pipe(
          Effect.flatMap((fail) =>
            fail
              ? Effect.fail(new MailDeliveryError({ reason: "simulated failure (memory mailbox)" }))
              : Ref.update(sent, (all) => [...all, { ...message }])
          )
        )
    })
    const mailbox = MemoryMailbox.of({
      sent: Ref.get(sent),
      failNext: (count) => Ref.set(failures, Math.max(0, count)),
      clear: Effect.zipRight(Ref.set(sent, []), Ref.set(failures, 0))
    })
    return Context.make(Mailer, mailer).pipe(Context.add(MemoryMailbox, mailbox))
  })
)

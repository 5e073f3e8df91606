/** Service configuration, read once from the environment. */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

export interface AppConfigShape {
  readonly host: string
  readonly port: number
  /** Base of `doc_url` links and of addresses the service hands out. */
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly redisUrl: Option.Option<string>
  readonly rateLimit: { readonly rps: number; readonly burst: number }
  readonly adminToken: Option.Option<Redacted.Redacted<string>>
  /** `CURSOR_SECRET`: signs list cursors; unset, a key is derived (see `http/CursorSecret.ts`). */
  readonly cursorSecret?: Redacted.Redacted<string> | undefined
  readonly ownerEmail: string
  /** `smtp://` or `smtps://` URL of the mail server; none: e-mail goes to the log. */
  readonly smtpUrl: Option.Option<string>
  /** `From` of every e-mail the service sends. */
  readonly mailFrom: string
  /** Longest sleep of the e-mail sender between looks for due e-mails (local enqueues wake it sooner). */
  readonly emailPollMillis: number
  /** `ALLOW_PRIVATE_URLS=true`: webhook receivers and ingested URLs may be loopback or private (dev, tests). */
  readonly allowPrivateUrls: boolean
  /** How often the webhook dispatcher looks for due deliveries when nothing rang its bell. */
  readonly webhookPollMillis: number
  /** A webhook attempt succeeds on a 2xx within this many milliseconds (`WEBHOOK_TIMEOUT_MS`, default 10 s). */
  readonly webhookResponseDeadlineMillis: number
  /** Print the bootstrap sandbox keys to stdout (off in tests). */
  readonly announceKeys: boolean
}

export class AppConfig extends Context.Tag("App/Config")<AppConfig, AppConfigShape>() {}

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

export const fromEnv = Effect.gen(function* () {
  const host = yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.port("PORT").pipe(Config.withDefault(3000))
  const publicUrl = yield* Config.string("PUBLIC_URL").pipe(Config.withDefault(`http://${host}:${port}`))
  return AppConfig.of({
    host,
    port,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    dataDir: yield* Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
    databaseUrl: yield* Config.option(Config.redacted("DATABASE_URL")),
    redisUrl: yield* Config.option(Config.string("REDIS_URL")),
    rateLimit: {
      rps: yield* positiveInt("RATE_LIMIT_RPS", 100),
      burst: yield* positiveInt("RATE_LIMIT_BURST", 200)
    },
    adminToken: yield* Config.option(Config.redacted("ADMIN_TOKEN")),
    cursorSecret: Option.getOrUndefined(yield* Config.option(Config.redacted("CURSOR_SECRET"))),
    ownerEmail: yield* Config.string("OWNER_EMAIL").pipe(Config.withDefault("owner@example.com")),
    smtpUrl: yield* Config.option(
      Config.string("SMTP_URL").pipe(
        Config.validate({
          message: "SMTP_URL must start with smtp:// or smtps://",
          validation: (url) => /^smtps?:\/\//i.test(url)
        })
      )
    ),
    mailFrom: yield* Config.string("MAIL_FROM").pipe(Config.withDefault("Assistant Platform <no-reply@localhost>")),
    emailPollMillis: yield* positiveInt("EMAIL_POLL_MS", 1000),
    allowPrivateUrls: yield* Config.boolean("ALLOW_PRIVATE_URLS").pipe(Config.withDefault(false)),
    webhookPollMillis: yield* positiveInt("WEBHOOK_POLL_MS", 1000),
    webhookResponseDeadlineMillis: yield* positiveInt("WEBHOOK_TIMEOUT_MS", 10_000),
    announceKeys: true
  })
})

export const layerFromEnv = Layer.effect(AppConfig, fromEnv)

/** Service configuration, read once from the environment. */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type LogLevelName, logLevelNames } from "./Logging.js"

/** Which `Ai` provider knowledge ingestion uses; `openai` speaks to any OpenAI-compatible server. */
export type AiSettings =
  | { readonly provider: "local" }
  | {
      readonly provider: "openai"
      readonly baseUrl: string
      readonly apiKey: Redacted.Redacted<string>
      readonly chatModel: string
      readonly embeddingModel: string
      readonly transcriptionModel: string
    }

export interface IngestSettings {
  readonly concurrency: number
  /**
   * Sources of one workspace processed at once, across instances (`INGEST_WORKSPACE_SHARE`; unset:
   * `defaultWorkspaceShare(concurrency)`).
   */
  readonly workspaceShare?: number | undefined
  /** One URL fetch, redirects included (`INGEST_FETCH_TIMEOUT_MS`, default 20 s). */
  readonly fetchTimeoutMillis: number
  /** Largest page or document fetched (`INGEST_MAX_PAGE_BYTES`, default 10 MB). */
  readonly maxPageBytes: number
  /** Longest sleep of the ingestion worker when nothing local wakes it (jobs of other processes). */
  readonly pollMillis: number
  /** A job's lease (`INGEST_LEASE_MS`, default 60 s), extended while it runs; a dead process's job is taken over after it. */
  readonly leaseMillis: number
  /** Longest one document may take to read (`INGEST_EXTRACT_TIMEOUT_MS`, default 30 s); over it the source fails. */
  readonly extractTimeoutMillis: number
  /** Memory one document may take to read (`INGEST_EXTRACT_MEMORY_MB`, default 256); over it the source fails. */
  readonly extractMemoryMb: number
}

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
  /** `SECRET_KEY`: encrypts stored secrets (the identity secret); unset, embedded mode keeps one under `DATA_DIR`. */
  readonly secretKey?: Redacted.Redacted<string> | undefined
  /** `FORMS_PORT`: a second listener serving the same app (the spec's `{forms_url}`); unset: none. */
  readonly formsPort?: number | undefined
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
  /**
   * Webhook deliveries of one workspace in flight at once, across instances (`WEBHOOK_WORKSPACE_SHARE`; unset: 12
   * of a process's 16, see `defaultWebhookWorkspaceShare`).
   */
  readonly webhookWorkspaceShare?: number | undefined
  /** Crawls of one workspace running at once, across instances (`CRAWL_WORKSPACE_SHARE`; unset: `defaultWorkspaceShare` of 2). */
  readonly crawlWorkspaceShare?: number | undefined
  /** How often the Q&A regeneration worker looks for jobs queued by other instances. */
  readonly qaRegeneratePollMillis: number
  /**
   * Evaluations' automatic runs start this long after the agent's last knowledge change (`EVALUATION_DEBOUNCE_MS`;
   * unset: `knowledgeChangeDebounceMillis`, a minute).
   */
  readonly evaluationDebounceMillis?: number | undefined
  /** How often the tables' change counts are read: on PGlite for ANALYZE and VACUUM (`src/db/Maintenance.ts`), everywhere for retrieval's word counts (`knowledge/WordStatistics.ts`). */
  readonly maintenanceMillis: number
  readonly ai: AiSettings
  /** A webhook attempt succeeds on a 2xx within this many milliseconds (`WEBHOOK_TIMEOUT_MS`, default 10 s). */
  readonly webhookResponseDeadlineMillis: number
  /** How long a claimed delivery stays its instance's (`WEBHOOK_LEASE_MS`, default 30 s, above the deadline). */
  readonly webhookLeaseMillis: number
  /** Ingestion: agents processed in parallel (`INGEST_CONCURRENCY`, default 2); one source at a time per agent. */
  readonly ingest: IngestSettings
  /** A conversation with no message for this long is ended (`CONVERSATION_IDLE_MINUTES`, default 30). */
  readonly conversationIdleMinutes?: number | undefined
  /** Longest sleep of the idle-timeout worker when nothing local wakes it (`CONVERSATION_IDLE_POLL_MS`, default 1 s; unset in a config: local wake-ups only). */
  readonly conversationIdlePollMillis?: number | undefined
  /** A reply nobody reads is generated on this long for a resume, then stopped (`REPLY_RESUME_GRACE_SECONDS`, default 30). */
  readonly replyResumeGraceSeconds?: number | undefined
  /** `API_KEY_CACHE_SECONDS`: an active key is remembered this long (default 5; 0: every request reads it); a revocation elsewhere takes effect within it. */
  readonly apiKeyCacheSeconds?: number | undefined
  /** `LOG_LEVEL`: the lowest level logged (default `info`); `none` silences the logs. */
  readonly logLevel?: LogLevelName | undefined
  /** `METRICS_TOKEN`: `GET /metrics` asks for it as a bearer token; unset, it answers loopback callers only. */
  readonly metricsToken?: Redacted.Redacted<string> | undefined
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: traces go to this OTLP/HTTP collector; unset, no tracing code is loaded. */
  readonly otlpEndpoint?: string | undefined
  /** On SIGTERM/SIGINT, in-flight requests and open streams get this long to finish (`SHUTDOWN_GRACE_MS`, default 10 s). */
  readonly shutdownGraceMillis?: number | undefined
  /**
   * Background workers start this long after the port opens, so the first readiness checks are not queued behind
   * their first claims (unset, as in tests: at once).
   */
  readonly workersStartAfterMillis?: number | undefined
  /** Print the bootstrap sandbox keys to stdout (off in tests). */
  readonly announceKeys: boolean
}

export class AppConfig extends Context.Tag("App/Config")<AppConfig, AppConfigShape>() {}

/**
 * A workspace's share of a pool of `pool` slots when none is configured: half of it, rounded up, at least one, so
 * one workspace whose work never ends (a receiver that never answers) beside another leaves that one free slots.
 * The price: a workspace alone gets at most its share too.
 */
export const defaultWorkspaceShare = (pool: number) => Math.max(1, Math.ceil(pool / 2))

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

/** Unset: undefined (the reader's default applies, which may follow another variable). */
const optionalPositiveInt = (name: string) =>
  Config.option(
    Config.integer(name).pipe(Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }))
  ).pipe(Config.map(Option.getOrUndefined))

const hasScheme = (url: string, schemes: ReadonlyArray<string>) =>
  URL.canParse(url) && schemes.includes(new URL(url).protocol.slice(0, -1).toLowerCase())

const schemeMessage = (name: string, schemes: ReadonlyArray<string>) =>
  `${name} must be a URL starting with ${schemes.map((s) => `${s}://`).join(" or ")}`

/** A URL of one of `schemes`; the refusal names the variable and the schemes. */
const urlOf = (name: string, schemes: ReadonlyArray<string>) =>
  Config.string(name).pipe(
    Config.validate({ message: schemeMessage(name, schemes), validation: (url) => hasScheme(url, schemes) })
  )

/** Like `urlOf`, kept redacted (it may hold a password); the refusal never shows the value. */
const secretUrlOf = (name: string, schemes: ReadonlyArray<string>) =>
  Config.redacted(name).pipe(
    Config.validate({
      message: schemeMessage(name, schemes),
      validation: (url) => hasScheme(Redacted.value(url), schemes)
    })
  )

const nonEmptySecret = (name: string) =>
  Config.redacted(name).pipe(
    Config.validate({ message: `${name} must not be empty`, validation: (r) => Redacted.value(r).trim() !== "" })
  )

/**
 * The shortest `ADMIN_TOKEN` accepted: the admin RPC can read and change every workspace, and a short token falls
 * to guessing. 32 characters of base62 hold about 190 bits; the generated token has 43 (`admin/AdminToken.ts`).
 */
export const ADMIN_TOKEN_MIN_LENGTH = 32

const adminTokenOf = (name: string) =>
  nonEmptySecret(name).pipe(
    Config.validate({
      message: `${name} must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters long (a generated one: \`openssl rand -base64 32\`)`,
      validation: (r) => Redacted.value(r).trim().length >= ADMIN_TOKEN_MIN_LENGTH
    })
  )

const nonEmpty = (name: string) =>
  Config.string(name).pipe(Config.validate({ message: `${name} must not be empty`, validation: (s) => s.trim() !== "" }))

const aiFromEnv = Effect.gen(function* () {
  const provider = yield* Config.literal("local", "openai")("AI_PROVIDER").pipe(Config.withDefault("local" as const))
  if (provider === "local") return { provider } satisfies AiSettings
  return {
    provider,
    baseUrl: yield* Config.string("AI_BASE_URL").pipe(
      Config.withDefault("https://api.openai.com/v1"),
      Config.validate({
        message: "AI_BASE_URL must be an http:// or https:// URL",
        validation: (url) => /^https?:\/\/[^/]/i.test(url) && URL.canParse(url)
      })
    ),
    // no default: an OpenAI-compatible server without a key is refused at start, by name
    apiKey: yield* Config.redacted("AI_API_KEY"),
    chatModel: yield* Config.nonEmptyString("AI_CHAT_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
    embeddingModel: yield* Config.nonEmptyString("AI_EMBEDDING_MODEL").pipe(Config.withDefault("text-embedding-3-small")),
    transcriptionModel: yield* Config.nonEmptyString("AI_TRANSCRIPTION_MODEL").pipe(Config.withDefault("whisper-1"))
  } satisfies AiSettings
})

export const fromEnv = Effect.gen(function* () {
  const host = yield* nonEmpty("HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.port("PORT").pipe(Config.withDefault(3000))
  const publicUrl = yield* urlOf("PUBLIC_URL", ["http", "https"]).pipe(Config.withDefault(`http://${host}:${port}`))
  const webhookDeadline = yield* positiveInt("WEBHOOK_TIMEOUT_MS", 10_000)
  return AppConfig.of({
    host,
    port,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    dataDir: yield* nonEmpty("DATA_DIR").pipe(Config.withDefault("./data")),
    databaseUrl: yield* Config.option(secretUrlOf("DATABASE_URL", ["postgres", "postgresql"])),
    redisUrl: yield* Config.option(urlOf("REDIS_URL", ["redis", "rediss"])),
    rateLimit: {
      rps: yield* positiveInt("RATE_LIMIT_RPS", 100),
      burst: yield* positiveInt("RATE_LIMIT_BURST", 200)
    },
    adminToken: yield* Config.option(adminTokenOf("ADMIN_TOKEN")),
    cursorSecret: Option.getOrUndefined(yield* Config.option(nonEmptySecret("CURSOR_SECRET"))),
    secretKey: Option.getOrUndefined(yield* Config.option(nonEmptySecret("SECRET_KEY"))),
    formsPort: Option.getOrUndefined(yield* Config.option(Config.port("FORMS_PORT"))),
    ownerEmail: yield* Config.string("OWNER_EMAIL").pipe(
      Config.validate({ message: "OWNER_EMAIL must be an e-mail address", validation: (e) => /^[^@\s]+@[^@\s]+$/.test(e) }),
      Config.withDefault("owner@example.com")
    ),
    smtpUrl: yield* Config.option(
      Config.string("SMTP_URL").pipe(
        Config.validate({
          message: "SMTP_URL must start with smtp:// or smtps://",
          validation: (url) => /^smtps?:\/\//i.test(url)
        })
      )
    ),
    mailFrom: yield* nonEmpty("MAIL_FROM").pipe(Config.withDefault("Assistant Platform <no-reply@localhost>")),
    emailPollMillis: yield* positiveInt("EMAIL_POLL_MS", 1000),
    allowPrivateUrls: yield* Config.boolean("ALLOW_PRIVATE_URLS").pipe(Config.withDefault(false)),
    webhookPollMillis: yield* positiveInt("WEBHOOK_POLL_MS", 1000),
    webhookWorkspaceShare: yield* optionalPositiveInt("WEBHOOK_WORKSPACE_SHARE"),
    crawlWorkspaceShare: yield* optionalPositiveInt("CRAWL_WORKSPACE_SHARE"),
    ingest: {
      concurrency: yield* positiveInt("INGEST_CONCURRENCY", 2),
      workspaceShare: yield* optionalPositiveInt("INGEST_WORKSPACE_SHARE"),
      fetchTimeoutMillis: yield* positiveInt("INGEST_FETCH_TIMEOUT_MS", 20_000),
      maxPageBytes: yield* positiveInt("INGEST_MAX_PAGE_BYTES", 10 * 1024 * 1024),
      pollMillis: yield* positiveInt("INGEST_POLL_MS", 1000),
      leaseMillis: yield* positiveInt("INGEST_LEASE_MS", 60_000),
      extractTimeoutMillis: yield* positiveInt("INGEST_EXTRACT_TIMEOUT_MS", 30_000),
      extractMemoryMb: yield* positiveInt("INGEST_EXTRACT_MEMORY_MB", 256)
    },
    qaRegeneratePollMillis: yield* positiveInt("QA_REGENERATE_POLL_MS", 1000),
    maintenanceMillis: yield* positiveInt("MAINTENANCE_MS", 10_000),
    evaluationDebounceMillis: yield* optionalPositiveInt("EVALUATION_DEBOUNCE_MS"),
    ai: yield* aiFromEnv,
    webhookResponseDeadlineMillis: webhookDeadline,
    webhookLeaseMillis: yield* positiveInt("WEBHOOK_LEASE_MS", 30_000).pipe(
      Config.validate({ message: "WEBHOOK_LEASE_MS must be above WEBHOOK_TIMEOUT_MS", validation: (n) => n > webhookDeadline })
    ),
    conversationIdleMinutes: yield* positiveInt("CONVERSATION_IDLE_MINUTES", 30),
    conversationIdlePollMillis: yield* positiveInt("CONVERSATION_IDLE_POLL_MS", 1000),
    replyResumeGraceSeconds: yield* positiveInt("REPLY_RESUME_GRACE_SECONDS", 30),
    apiKeyCacheSeconds: yield* Config.integer("API_KEY_CACHE_SECONDS").pipe(
      Config.withDefault(5),
      Config.validate({ message: "API_KEY_CACHE_SECONDS must be an integer from 0 to 300", validation: (n) => n >= 0 && n <= 300 })
    ),
    logLevel: yield* Config.literal(...logLevelNames)("LOG_LEVEL").pipe(Config.withDefault("info" as const)),
    metricsToken: Option.getOrUndefined(yield* Config.option(Config.redacted("METRICS_TOKEN"))),
    otlpEndpoint: Option.getOrUndefined(
      yield* Config.option(
        Config.string("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
          Config.validate({
            message: "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL",
            validation: (url) => /^https?:\/\/[^/]/i.test(url) && URL.canParse(url)
          })
        )
      )
    ),
    shutdownGraceMillis: yield* positiveInt("SHUTDOWN_GRACE_MS", 10_000),
    // long enough for a probe polling every few tens of ms to see the first readiness; short next to any poll
    workersStartAfterMillis: 500,
    announceKeys: true
  })
})

/**
 * One line for a refused configuration, naming each variable at fault, e.g.
 * `invalid configuration: PORT: Expected a network port value but received abc`.
 */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const leaves = (e: ConfigError.ConfigError): ReadonlyArray<string> => {
    switch (e._op) {
      case "And":
      case "Or":
        return [...leaves(e.left), ...leaves(e.right)]
      default: {
        const name = e.path.join("_")
        return [e.message.startsWith(name) ? e.message : `${name}: ${e.message}`]
      }
    }
  }
  return `invalid configuration: ${[...new Set(leaves(error))].join("; ").replace(/\s*\n\s*/g, " ")}`
}

export const layerFromEnv = Layer.effect(AppConfig, fromEnv)

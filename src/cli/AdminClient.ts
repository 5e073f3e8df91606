/**
 * The CLI's connection to the running service: the admin RPC over HTTP, never
 * the database (an embedded PGlite database belongs to the service process).
 */
import * as Options from "@effect/cli/Options"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as RpcClient from "@effect/rpc/RpcClient"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import { AdminError, AdminRpcs } from "../../schema/Admin.js"
import { readAdminToken } from "../admin/AdminToken.js"

/** Options every command takes, so they can follow the subcommand. */
export const connectionOptions = {
  url: Options.text("url").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription("Service base URL (default: $SERVICE_URL, else http://127.0.0.1:$PORT, PORT defaulting to 3000)"),
    Options.optional
  ),
  adminToken: Options.redacted("admin-token").pipe(
    Options.withPseudoName("TOKEN"),
    Options.withDescription(
      "Admin token (default: $ADMIN_TOKEN, else the file <$DATA_DIR or ./data>/admin-token); " +
        "prefer those: a token on the command line is visible in ps"
    ),
    Options.optional
  )
}

export interface Connection {
  readonly url: Option.Option<string>
  readonly adminToken: Option.Option<Redacted.Redacted<string>>
}

export class AdminClient extends Context.Tag("Cli/AdminClient")<
  AdminClient,
  RpcClient.FromGroup<typeof AdminRpcs, RpcClientError>
>() {}

/** A failure the CLI reports as one line (and exit code 1). */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

const defaultUrl = Config.string("SERVICE_URL").pipe(
  Config.orElse(() => Config.map(Config.port("PORT").pipe(Config.withDefault(3000)), (port) => `http://127.0.0.1:${port}`))
)

const resolveToken = (flag: Option.Option<Redacted.Redacted<string>>) =>
  Effect.gen(function* () {
    if (Option.isSome(flag)) return flag.value
    const env = yield* Config.option(Config.redacted("ADMIN_TOKEN"))
    if (Option.isSome(env) && Redacted.value(env.value) !== "") return env.value
    const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./data"))
    const file = yield* readAdminToken(dataDir).pipe(Effect.orElseSucceed(() => Option.none()))
    if (Option.isSome(file)) return file.value
    return yield* Effect.fail(
      new CliFailure({
        message: `No admin token: pass --admin-token, set ADMIN_TOKEN, or run where ${dataDir}/admin-token exists`
      })
    )
  })

/** The RPC client for one command, closed when the command ends. */
export const layer = (connection: Connection) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const base = Option.isSome(connection.url) ? connection.url.value : yield* defaultUrl
      const token = yield* resolveToken(connection.adminToken)
      // A non-2xx answer (wrong --url, a proxy) is an error, not an RPC payload.
      const http = Layer.effect(
        HttpClient.HttpClient,
        Effect.map(HttpClient.HttpClient, (client) =>
          client.pipe(
            HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(token))),
            HttpClient.filterStatusOk
          )
        )
      ).pipe(Layer.provide(FetchHttpClient.layer))
      return Layer.scoped(AdminClient, RpcClient.make(AdminRpcs)).pipe(
        Layer.provide(RpcClient.layerProtocolHttp({ url: `${base.replace(/\/+$/, "")}/admin/rpc` })),
        Layer.provide([http, RpcSerialization.layerJson])
      )
    })
  )

const describeClientError = (error: RpcClientError): string => {
  const cause = error.cause
  if (HttpClientError.isHttpClientError(cause)) {
    const url = cause.request.url
    if (cause._tag === "ResponseError") return `the service at ${url} answered HTTP ${cause.response.status}; check --url`
    return `could not reach the service at ${url} (is it running? check --url)`
  }
  return error.message
}

/** One line saying what went wrong, for a person at a terminal. */
export const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (error instanceof AdminError) return `${error.code}: ${error.message}`
  if (error instanceof RpcClientError) return describeClientError(error)
  if (ParseResult.isParseError(error)) {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
    return `invalid input: ${issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ")}`
  }
  if (error instanceof Error) return error.message
  return String(error)
}

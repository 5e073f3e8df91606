/**
 * What the CLI's commands over the public API share: the options naming the service and the key, and the typed
 * client they make (the contract's `HttpApiClient`, the key as a bearer token).
 */
import * as Options from "@effect/cli/Options"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Api } from "../../schema/Api.js"

export const serviceOptions = {
  url: Options.text("url").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription("Service base URL (default: $SERVICE_URL, else http://127.0.0.1:$PORT, PORT defaulting to 3000)"),
    Options.optional
  ),
  key: Options.redacted("key").pipe(
    Options.withPseudoName("API_KEY"),
    Options.withDescription("Secret API key (sk_…) with the command's scopes: write:knowledge and read:knowledge to ingest and crawl, write:agents and read:agents to evaluate (default: $API_KEY)"),
    Options.optional
  )
}

/** How often a command polls what it follows. */
export const intervalOption = (what: string) =>
  Options.integer("interval-ms").pipe(
    Options.withPseudoName("MS"),
    Options.withDescription(`How often to poll ${what}, in milliseconds (default 1000)`),
    Options.withDefault(1000)
  )

/** The typed client of the service the options name, with their key (or `$SERVICE_URL`, `$PORT`, `$API_KEY`). */
export const apiClient = (args: { readonly url: Option.Option<string>; readonly key: Option.Option<Redacted.Redacted> }) =>
  Effect.gen(function* () {
    const port = yield* Config.integer("PORT").pipe(Config.withDefault(3000))
    const baseUrl = Option.isSome(args.url)
      ? args.url.value
      : yield* Config.string("SERVICE_URL").pipe(Config.withDefault(`http://127.0.0.1:${port}`))
    const key = Option.isSome(args.key) ? args.key.value : yield* Config.redacted("API_KEY")
    return yield* HttpApiClient.make(Api, {
      baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(key)))
    })
  })

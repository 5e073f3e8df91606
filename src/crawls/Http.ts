/** HTTP handlers of the crawls group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Crawls } from "./Crawls.js"

export const CrawlsHttp = HttpApiBuilder.group(Api, "crawls", (handlers) =>
  Effect.gen(function* () {
    const crawls = yield* Crawls
    return handlers
      .handle(
        "create",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => crawls.create(c, path.agent_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => crawls.list(c, path.agent_id, urlParams)).pipe(
          Effect.flatMap(({ crawls, pagination }) => okList(crawls, pagination))
        )
      )
      .handle("retrieve", ({ path }) =>
        Effect.flatMap(Caller, (c) => crawls.retrieve(c, path.agent_id, path.crawl_id)).pipe(Effect.flatMap(ok))
      )
      .handle(
        "update",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => crawls.update(c, path.agent_id, path.crawl_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "cancel",
        ({ path }) => Effect.flatMap(Caller, (c) => crawls.cancel(c, path.agent_id, path.crawl_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("pages", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => crawls.pagesOf(c, path.agent_id, path.crawl_id, urlParams)).pipe(
          Effect.flatMap(({ pages, pagination }) => okList(pages, pagination))
        )
      )
  })
)

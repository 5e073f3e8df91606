/** HTTP handlers of the knowledge group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Freshness } from "./Freshness.js"
import { Knowledge } from "./Knowledge.js"
import { KnowledgeSearch } from "./Search.js"

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.gen(function* () {
    const knowledge = yield* Knowledge
    const search = yield* KnowledgeSearch
    const freshness = yield* Freshness
    return handlers
      .handle(
        "create",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => knowledge.create(c, path.agent_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "batch",
        ({ headers, path, payload }) =>
          Effect.flatMap(Caller, (c) => knowledge.batch(c, path.agent_id, payload.urls, headers["idempotency-key"])).pipe(
            // the contract: this operation's `meta` is null; the request id stays in the `Request-Id` header
            Effect.map((data) => ({ data, meta: null }))
          ),
        runsToCompletion
      )
      // a read: nothing to finish if the client hangs up
      .handle("search", ({ path, payload }) =>
        Effect.flatMap(Caller, (c) => search.search(c, path.agent_id, payload)).pipe(Effect.flatMap(ok))
      )
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => knowledge.list(c, path.agent_id, urlParams)).pipe(
          Effect.flatMap(({ pagination, sources }) => okList(sources, pagination))
        )
      )
      .handle(
        "refreshAll",
        ({ path }) => Effect.flatMap(Caller, (c) => freshness.requestRound(c, path.agent_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("retrieve", ({ path }) =>
        Effect.flatMap(Caller, (c) => knowledge.retrieve(c, path.agent_id, path.source_id)).pipe(Effect.flatMap(ok))
      )
      .handle(
        "refresh",
        ({ path }) =>
          Effect.flatMap(Caller, (c) => freshness.request(c, path.agent_id, path.source_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => knowledge.remove(c, path.agent_id, path.source_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)

/** HTTP handlers of the tickets group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Erasure } from "./Erasure.js"
import type { Acting } from "./Rules.js"
import { Tickets } from "./Tickets.js"

const acting = (headers: { readonly "service-member-id"?: string | undefined }) =>
  Effect.map(Caller, (caller): Acting => ({ caller, memberId: Option.fromNullable(headers["service-member-id"]) }))

export const TicketsHttp = HttpApiBuilder.group(Api, "tickets", (handlers) =>
  Effect.gen(function* () {
    const tickets = yield* Tickets
    const erasure = yield* Erasure
    return handlers
      .handle(
        "create",
        ({ headers, payload }) => Effect.flatMap(acting(headers), (a) => tickets.create(a, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => tickets.list(c, urlParams)).pipe(
          Effect.flatMap(({ pagination, tickets }) => okList(tickets, pagination))
        )
      )
      .handle("retrieve", ({ path }) =>
        Effect.flatMap(Caller, (c) => tickets.retrieve(c, path.public_id)).pipe(Effect.flatMap(ok))
      )
      .handle("messages", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => tickets.messages(c, path.public_id, urlParams)).pipe(
          Effect.flatMap(({ messages, pagination }) => okList(messages, pagination))
        )
      )
      .handle(
        "update",
        ({ headers, path, payload }) =>
          Effect.flatMap(acting(headers), (a) => tickets.update(a, path.public_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "resolve",
        ({ headers, path }) =>
          Effect.flatMap(acting(headers), (a) => tickets.resolve(a, path.public_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "reopen",
        ({ headers, path }) =>
          Effect.flatMap(acting(headers), (a) => tickets.reopen(a, path.public_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "addMessage",
        ({ headers, path, payload }) =>
          Effect.flatMap(acting(headers), (a) => tickets.addMessage(a, path.public_id, payload.body)).pipe(
            Effect.flatMap(ok)
          ),
        runsToCompletion
      )
      .handle(
        "erase",
        ({ headers, path }) =>
          Effect.flatMap(acting(headers), (a) => erasure.erase(a, path.public_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)

/** HTTP handlers of the webhooks group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Webhooks } from "./Webhooks.js"

export const WebhooksHttp = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle(
        "create",
        ({ payload }) => Effect.flatMap(Caller, (c) => webhooks.create(c, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => webhooks.list(c, urlParams)).pipe(
          Effect.flatMap(({ subscriptions, pagination }) => okList(subscriptions, pagination))
        )
      )
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => webhooks.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle(
        "update",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => webhooks.update(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => webhooks.remove(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "test",
        ({ path }) => Effect.flatMap(Caller, (c) => webhooks.sendTest(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => webhooks.deliveries(c, path.id, urlParams)).pipe(
          Effect.flatMap(({ deliveries, pagination }) => okList(deliveries, pagination))
        )
      )
      .handle("delivery", ({ path }) =>
        Effect.flatMap(Caller, (c) => webhooks.delivery(c, path.id, path.delivery_id)).pipe(Effect.flatMap(ok))
      )
      .handle(
        "retry",
        ({ path }) =>
          Effect.flatMap(Caller, (c) => webhooks.retry(c, path.id, path.delivery_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "rotateSecret",
        ({ path }) => Effect.flatMap(Caller, (c) => webhooks.rotateSecret(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)

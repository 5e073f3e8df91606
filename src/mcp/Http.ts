/** The HTTP handler of the MCP group: the body's JSON-RPC answered for the key (`Mcp.ts`), `202` when it asked nothing. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { Mcp } from "./Mcp.js"

export const McpHttp = HttpApiBuilder.group(Api, "mcp", (handlers) =>
  Effect.gen(function* () {
    const mcp = yield* Mcp
    return handlers.handle(
      "serve",
      ({ payload }) =>
        Effect.flatMap(Caller, (caller) => mcp.serve(caller, payload)).pipe(
          Effect.map(
            Option.match({
              onNone: () => HttpServerResponse.empty({ status: 202 }),
              onSome: (responses) => HttpServerResponse.unsafeJson(responses)
            })
          )
        ),
      // a tool's write (a reply, a ticket) runs to its end even if the client hangs up, as the REST twin's does
      { uninterruptible: true }
    )
  })
)

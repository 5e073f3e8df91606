/**
 * The body `POST /admin/rpc` accepts: one request of the RPC protocol as its HTTP client sends it (JSON
 * serialization, one message per HTTP request), naming a procedure of `AdminRpcs`. The protocol itself answers
 * anything else with `200` and a `Defect` ("Unknown request tag: undefined"), which tells a caller neither that
 * the fault is theirs nor what to send; so a body that is not such a request is refused first, `400
 * parameter_invalid` in the envelope, naming the field at fault. The payload is left to the RPC, which decodes
 * it with the procedure's own schema.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AdminRpcs } from "../../schema/Admin.js"
import { ParameterInvalid } from "../../schema/Errors.js"

const procedures = [...AdminRpcs.requests.keys()]

const RequestFrame = Schema.TaggedStruct("Request", {
  id: Schema.String,
  tag: Schema.String.pipe(
    Schema.filter((tag) => AdminRpcs.requests.has(tag), { message: () => `expected one of ${procedures.join(", ")}` })
  ),
  payload: Schema.Unknown,
  headers: Schema.Array(Schema.Tuple(Schema.String, Schema.String)),
  traceId: Schema.optional(Schema.String),
  spanId: Schema.optional(Schema.String),
  sampled: Schema.optional(Schema.Boolean)
})

const expected =
  `an admin RPC request: {"_tag": "Request", "id": "1", "tag": one of ${procedures.join(", ")}, ` +
  `"payload": {…}, "headers": []}`

const refusal = (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const param = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".")
  const why = issue === undefined ? "" : `${param}: ${issue.message.replace(/\n[\s\S]*/, "")}; `
  return new ParameterInvalid({ message: `${why}expected ${expected}`, param })
}

/** Fails with `400 parameter_invalid` unless the body is one admin RPC request; the body stays readable for the RPC. */
export const checkFrame: Effect.Effect<void, ParameterInvalid, HttpServerRequest.HttpServerRequest> = Effect.gen(
  function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* Effect.mapError(
      request.json,
      () => new ParameterInvalid({ message: `The body is not valid JSON; expected ${expected}`, param: "body" })
    )
    yield* Effect.mapError(Schema.decodeUnknown(RequestFrame)(body), refusal)
  }
)

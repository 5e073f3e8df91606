/**
 * The edge's body step: the input policy (`InputPolicy.ts`) applied to the body, by what the endpoint takes.
 * A JSON body is read here, counted, checked and handed to the API already parsed; an upload's bytes
 * (`UploadBody` on the endpoint) are read by its handler under the upload's cap; a POST that declares no
 * payload takes no body or `{}`.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ParameterInvalid, PayloadTooLarge, UnsupportedMediaType } from "../../schema/Errors.js"
import type { Answer, EdgeRequest } from "./EdgeRequest.js"
import { maxBodyBytes, parseJsonBody, readBody } from "./InputPolicy.js"

/** The step after the body's: the request with its body read (an empty one for a body the API reads itself). */
export type WithBody = (incoming: EdgeRequest, body: string, next: Answer) => Answer

const isWrite = (method: string) => method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE"

/** `application/json` and every `+json` type (`application/merge-patch+json`), with parameters. */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([a-z0-9!#$&^_.-]+\+)?json\s*(;.*)?$/is.test(contentType.trim())

const isEmptyObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0

/**
 * The request the API sees: the body already read and checked by the edge, as
 * `application/json` (a `+json` type, or no type on an empty body), which is how
 * the library picks its decoder; any other decoder would read the already
 * consumed stream and wait forever. Everything else is the original request
 * (its prototype).
 */
const withCheckedBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  value: unknown
): HttpServerRequest.HttpServerRequest => {
  const headers = { ...request.headers, "content-type": "application/json" }
  const bytes = new TextEncoder().encode(text)
  return Object.create(request, {
    headers: { value: headers },
    text: { get: () => Effect.succeed(text) },
    json: { get: () => Effect.succeed(value) },
    arrayBuffer: { get: () => Effect.succeed(bytes.buffer) },
    stream: { get: () => Stream.succeed(bytes) }
  })
}

/** The body read, checked as JSON and handed on (the rest of a body over the limit is the edge's to drop). */
const readJson = (incoming: EdgeRequest, app: HttpApp.Default, then: WithBody): Answer => {
  const { request, route } = incoming
  const source = NodeHttpServerRequest.toIncomingMessage(request)
  return Effect.flatMap(readBody(source), (text) => {
    if (text !== "" && !isJson(request.headers["content-type"])) {
      return Effect.fail(
        new UnsupportedMediaType({
          message: "Send the body as JSON with `Content-Type: application/json` (or a `+json` type)",
          param: "Content-Type"
        })
      )
    }
    const parsed = parseJsonBody(text)
    if (Either.isLeft(parsed)) return Effect.fail(parsed.left)
    const value = parsed.right
    if (route.endpoint?.bodiless && value !== undefined && !isEmptyObject(value)) {
      return Effect.fail(
        new ParameterInvalid({ message: "This endpoint takes no body: send none, or `{}`", param: "body" })
      )
    }
    return then(
      incoming,
      text,
      Effect.provideService(app, HttpServerRequest.HttpServerRequest, withCheckedBody(request, text, value))
    )
  })
}

export const checkBody = (incoming: EdgeRequest, app: HttpApp.Default, then: WithBody): Answer => {
  const { request, route } = incoming
  const upload = route.endpoint?.upload
  const maxBytes = upload?.maxBytes ?? maxBodyBytes
  // refuse an oversized body before reading any of it
  if (Number(request.headers["content-length"] ?? 0) > maxBytes) {
    return Effect.fail(new PayloadTooLarge({ message: `The request body exceeds ${maxBytes} bytes` }))
  }
  if (upload !== undefined) {
    if (!upload.mediaType.test(request.headers["content-type"] ?? "")) {
      return Effect.fail(
        new UnsupportedMediaType({
          message: `Send the file's bytes as ${upload.mediaTypeNames}`,
          param: "Content-Type"
        })
      )
    }
    // the handler reads the bytes itself, counted against this cap as they stream in
    return app.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(upload.maxBytes)))
  }
  if (!isWrite(request.method)) return app
  if (route.operational || request.method === "DELETE") {
    // read by the app itself (the admin endpoints), under the same cap
    const capped = app.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)))
    // a bodiless POST (the admin endpoints) may still carry an Idempotency-Key
    return request.method === "POST" ? then(incoming, "", capped) : capped
  }
  return readJson(incoming, app, then)
}

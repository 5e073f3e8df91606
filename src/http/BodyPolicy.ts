/**
 * The body policy (`BodyPolicy` of `schema/Endpoint.ts`): the input policy (`InputPolicy.ts`) applied to the
 * body of the endpoint the router matched, by what it takes. A JSON body is read here, counted, checked and
 * handed to the decoder already parsed; an upload's bytes (`UploadBody` on the endpoint) are read by its
 * handler under the upload's cap; a POST that declares no payload takes no body or `{}`.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { BodyPolicy } from "../../schema/Endpoint.js"
import { ParameterInvalid, PayloadTooLarge, UnsupportedMediaType } from "../../schema/Errors.js"
import { maxBodyBytes, parseJsonBody, readBody } from "./InputPolicy.js"
import { endpointAt } from "./Endpoints.js"

const isWrite = (method: string) => method === "POST" || method === "PUT" || method === "PATCH"

/** `application/json` and every `+json` type (`application/merge-patch+json`), with parameters. */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([a-z0-9!#$&^_.-]+\+)?json\s*(;.*)?$/is.test(contentType.trim())

const isEmptyObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0

/**
 * The request the decoder sees: the body already read and checked, as `application/json` (a `+json` type,
 * or no type on an empty body), which is how the library picks its decoder; any other decoder would read the
 * already consumed stream and wait forever. Everything else is the original request (its prototype).
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

/** The request whose bytes its handler reads: counted against `maxBytes` as they stream in. */
const withBodyCap = (request: HttpServerRequest.HttpServerRequest, maxBytes: number): HttpServerRequest.HttpServerRequest =>
  Object.create(request, {
    arrayBuffer: {
      get: () => Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxBytes)))
    }
  })

/** The body read and checked as JSON (the rest of a body over the limit is the edge's to drop). */
const readJson = (
  request: HttpServerRequest.HttpServerRequest,
  bodiless: boolean
): Effect.Effect<HttpServerRequest.HttpServerRequest, PayloadTooLarge | UnsupportedMediaType | ParameterInvalid> =>
  Effect.flatMap(readBody(NodeHttpServerRequest.toIncomingMessage(request)), (text): Effect.Effect<
    HttpServerRequest.HttpServerRequest,
    UnsupportedMediaType | ParameterInvalid
  > => {
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
    if (bodiless && value !== undefined && !isEmptyObject(value)) {
      return Effect.fail(new ParameterInvalid({ message: "This endpoint takes no body: send none, or `{}`", param: "body" }))
    }
    return Effect.succeed(withCheckedBody(request, text, value))
  })

export const BodyPolicyLive = Layer.succeed(
  BodyPolicy,
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { route } = yield* HttpRouter.RouteContext
    const endpoint = endpointAt(route)
    const upload = endpoint?.upload
    const maxBytes = upload?.maxBytes ?? maxBodyBytes
    // refuse an oversized body before reading any of it
    if (Number(request.headers["content-length"] ?? 0) > maxBytes) {
      return yield* new PayloadTooLarge({ message: `The request body exceeds ${maxBytes} bytes` })
    }
    if (upload !== undefined) {
      if (!upload.mediaType.test(request.headers["content-type"] ?? "")) {
        return yield* new UnsupportedMediaType({ message: `Send the file's bytes as ${upload.mediaTypeNames}`, param: "Content-Type" })
      }
      // the handler reads the bytes itself, counted against the upload's cap as they stream in
      return withBodyCap(request, upload.maxBytes)
    }
    return isWrite(request.method) ? yield* readJson(request, endpoint?.bodiless === true) : request
  })
)

/** The `error` event a failed reply ends its stream with: the code a client acts on, and what it is told. */
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"
import { AiError } from "../../layers/Ai.js"
import { aiRetryAfterSeconds, AiUnavailable } from "../../schema/Errors.js"
import { errorEventOf } from "../../src/conversations/Replies.js"

describe("a failed reply's error event", () => {
  it("a provider's transient failure: service_unavailable, send the message again", () => {
    expect(errorEventOf(Option.some(new AiError({ message: "timeout", transient: true })))).toEqual({
      type: "error",
      code: "service_unavailable",
      message: "The AI provider did not answer; send the message again later",
      retry_after: aiRetryAfterSeconds
    })
  })

  it("retrieval's outage keeps its own code", () => {
    expect(errorEventOf(Option.some(new AiUnavailable({ message: "embeddings down" })))).toMatchObject({
      code: "ai_unavailable",
      message: "The AI provider did not answer; send the message again later",
      retry_after: aiRetryAfterSeconds
    })
  })

  it("a permanent failure or a defect: internal_error, named by the message's request id in the logs", () => {
    const internal = {
      type: "error",
      code: "internal_error",
      message: "The reply failed; the request id of the message names it in our logs"
    }
    expect(errorEventOf(Option.some(new AiError({ message: "bad key", transient: false })))).toEqual(internal)
    expect(errorEventOf(Option.none())).toEqual(internal)
  })
})

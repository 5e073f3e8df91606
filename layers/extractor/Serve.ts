/**
 * The decoder process's side of the protocol (`Protocol.ts`): answers each
 * request with what `answer` found, or why the input is unreadable. The
 * service forks such a process (`layers/Decoders.ts`) so that whatever a
 * decoder we did not write does with hostile bytes (throws from an event
 * handler, rejects a promise nobody awaits, aborts in native code, loops, grows
 * without bound) ends this process and the one input it was reading, never the
 * service. An error nothing caught is answered as the input's failure before
 * the process exits; a crash leaves no answer, which the service reports the
 * same way.
 */
import { readFileSync } from "node:fs"
import { Unreadable } from "./Documents.js"
import {
  answerPieceChars,
  type DecodeAnswers,
  type DecodeMessage,
  type DecodePiece,
  type DecodeReply,
  type DecodeRequest,
  nounOf,
  ready,
  withBytes
} from "./Protocol.js"

const send = (message: DecodeReply | DecodePiece | typeof ready, then?: () => void) => {
  if (process.connected) process.send!(message, undefined, {}, () => then?.())
  else then?.()
}

/** A long `text` of the answer's value in pieces, then the reply without it (see `answerPieceChars`). */
const sendAnswer = (value: unknown) => {
  const text = typeof value === "object" && value !== null ? (value as { text?: unknown }).text : undefined
  if (typeof text !== "string" || text.length <= answerPieceChars) return send({ ok: true, value })
  for (let at = 0; at < text.length; at += answerPieceChars) send({ piece: text.slice(at, at + answerPieceChars) })
  send({ ok: true, value: { ...(value as object), text: "" }, pieced: true })
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

export type Answer = (request: DecodeRequest) => Promise<DecodeAnswers[DecodeRequest["_tag"]]>

/** Serves requests from the parent process until it goes away. */
export const serve = (answer: Answer) => {
  // the input being read, named in the answer to an error that escapes its reader
  let reading = "input"
  const reasonOf = (cause: unknown): string =>
    cause instanceof Unreadable
      ? cause.message
      : cause instanceof RangeError
        ? `the ${reading} is nested too deeply to be read`
        : `the ${reading} could not be read`
  // an error no reader caught (from an event handler, or a promise nobody awaited): the input's failure, then exit
  const broke = (cause: unknown) => {
    send({ ok: false, fatal: true, message: `the ${reading} broke its decoder (${describe(cause)})` }, () => process.exit(70))
  }
  process.on("uncaughtException", broke)
  process.on("unhandledRejection", broke)
  // the service went away (or let this process go): nothing is left to answer
  process.on("disconnect", () => process.exit(0))
  process.on("message", async (message: DecodeMessage) => {
    let value: unknown
    reading = nounOf(message.request)
    try {
      const request = message.spilled === undefined ? message.request : withBytes(message.request, readFileSync(message.spilled))
      value = await answer(request)
    } catch (cause) {
      return send({ ok: false, message: reasonOf(cause) })
    }
    sendAnswer(value)
  })
  send(ready)
}

/**
 * An extraction thread's entry (`dist/extract-worker.mjs` in the bundle): reads
 * one untrusted input per message (a document, a CSV, an audio file's headers)
 * and answers with what it found or why it is unreadable. The thread runs under
 * the memory limit it was started with; the service stops it when an input
 * takes too long.
 */
import * as Either from "effect/Either"
import { parentPort } from "node:worker_threads"
import { audioSeconds } from "./AudioDuration.js"
import { parseCsvQa } from "./Csv.js"
import { extract, Unreadable } from "./Documents.js"
import type { ThreadAnswers, ThreadReply, ThreadRequest } from "./Protocol.js"

const port = parentPort!

const reasonOf = (cause: unknown): string =>
  cause instanceof Unreadable
    ? cause.message
    : cause instanceof RangeError
      ? "the document is nested too deeply to be read"
      : "the document could not be read"

const answer = async (message: ThreadRequest): Promise<ThreadAnswers[ThreadRequest["_tag"]]> => {
  switch (message._tag) {
    case "Document":
      return await extract(message.request.kind, message.request.bytes, message.request.fallbackTitle)
    case "CsvQa":
      return Either.match(parseCsvQa(message.content), { onLeft: (errors) => ({ errors }), onRight: (rows) => ({ rows }) })
    case "AudioSeconds":
      return audioSeconds(message.bytes, message.audio) ?? null
  }
}

port.on("message", async (message: ThreadRequest) => {
  let reply: ThreadReply
  try {
    reply = { ok: true, value: await answer(message) }
  } catch (cause) {
    reply = { ok: false, message: reasonOf(cause) }
  }
  port.postMessage(reply)
})

/**
 * An extraction thread's entry (`dist/extract-worker.mjs` in the bundle): reads
 * one document per message and answers with its text or why it is unreadable.
 * The thread runs under the memory limit it was started with; the service
 * stops it when a document takes too long.
 */
import { parentPort } from "node:worker_threads"
import { extract, Unreadable } from "./Documents.js"
import type { ExtractReply, ExtractRequest } from "./Protocol.js"

const port = parentPort!

const reasonOf = (cause: unknown): string =>
  cause instanceof Unreadable
    ? cause.message
    : cause instanceof RangeError
      ? "the document is nested too deeply to be read"
      : "the document could not be read"

port.on("message", async (request: ExtractRequest) => {
  let reply: ExtractReply
  try {
    reply = { ok: true, document: await extract(request.kind, request.bytes, request.fallbackTitle) }
  } catch (cause) {
    reply = { ok: false, message: reasonOf(cause) }
  }
  port.postMessage(reply)
})

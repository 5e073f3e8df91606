/**
 * The worker-thread side of `LocalThread.ts`: the local provider's categories, Q&A and vectors of big inputs,
 * computed here so that the main thread serves requests meanwhile. Bundled as `dist/ai-worker.mjs`; from sources
 * it is loaded through tsx.
 */
import { parentPort } from "node:worker_threads"
import * as Extract from "./Extract.js"
import type { LocalReply, LocalRequest } from "./LocalProtocol.js"
import { hashEmbed } from "./Text.js"

const port = parentPort
if (port === null) throw new Error("layers/ai/LocalWorker.ts runs as a worker thread (see LocalThread.ts)")

const run = (request: LocalRequest): unknown => {
  switch (request.op) {
    case "categorize":
      return Extract.categories(request.doc)
    case "generateQa":
      return Extract.qa(request.doc, request.categories)
    case "embed":
      return request.texts.map((text) => hashEmbed(text, request.dimensions))
  }
}

port.on("message", (request: LocalRequest) => {
  let reply: LocalReply
  try {
    reply = { id: request.id, ok: true, result: run(request) }
  } catch (error) {
    reply = { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) }
  }
  port.postMessage(reply)
})

/**
 * A decoder process for tests (`Decoders.layerProcesses({ entry })`): the
 * service's protocol (`layers/extractor/Serve.ts`) over a reader that breaks
 * as the document's text says, the ways a decoder we did not write can break;
 * any other document is read as the service reads it.
 */
import { extract } from "../../layers/extractor/Documents.js"
import { serve } from "../../layers/extractor/Serve.js"

const never = new Promise<never>(() => {})

serve(async (request) => {
  if (request._tag !== "Document") throw new Error("this test decoder reads documents only")
  const { bytes, fallbackTitle, kind } = request.request
  switch (new TextDecoder().decode(bytes)) {
    case "abort":
      // what a native assertion does
      return process.abort()
    case "segfault":
      process.kill(process.pid, "SIGSEGV")
      return never
    case "throw from an event handler":
      setImmediate(() => {
        throw new Error("thrown from an event handler")
      })
      return never
    case "reject unawaited":
      void Promise.reject(new Error("a promise nobody awaited"))
      return never
    case "loop":
      for (;;);
    case "grow": {
      // memory outside V8's heap (as native and WASM decoders hold it), touched so it is resident
      const held: Array<Buffer> = []
      for (;;) {
        held.push(Buffer.alloc(16 * 1024 * 1024, 1))
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }
    default:
      return extract(kind, bytes, fallbackTitle)
  }
})

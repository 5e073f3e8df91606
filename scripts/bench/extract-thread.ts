/**
 * The same-work loop's page reading (`knowledge.ts`), off its main thread as DESIGN requires of untrusted
 * documents: a worker thread that reads each page it is sent with the service's own code and posts the document back.
 */
import { parentPort } from "node:worker_threads"
import { fromHtml } from "../../layers/extractor/Documents.js"

parentPort!.on("message", ({ html, url }: { html: string; url: string }) => parentPort!.postMessage(fromHtml(html, url)))

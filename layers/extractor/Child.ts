/**
 * A decoder process's entry (`dist/decoder-process.mjs` in the bundle): reads
 * one untrusted input per message (a document, a CSV, an audio file's headers,
 * an image's text, a page's links, a sitemap) with the service's readers; `Serve.ts` is the protocol and
 * what happens when a reader breaks.
 */
import * as Either from "effect/Either"
import { audioSeconds } from "./AudioDuration.js"
import { parseCsvQa } from "./Csv.js"
import { extract } from "./Documents.js"
import { type Languages, recognize } from "./Images.js"
import { readLinks } from "./Links.js"
import { serve } from "./Serve.js"
import { parseSitemap } from "./Sitemap.js"

// the folder of traineddata the service linked for every decoder process (argv: [node, entry, languages])
const languages: Languages = JSON.parse(process.argv[2] ?? "{}")

serve(async (request) => {
  switch (request._tag) {
    case "Document":
      return await extract(request.request.kind, request.request.bytes, request.request.fallbackTitle)
    case "CsvQa":
      return Either.match(parseCsvQa(request.content), { onLeft: (errors) => ({ errors }), onRight: (rows) => ({ rows }) })
    case "AudioSeconds":
      return audioSeconds(request.bytes, request.audio) ?? null
    case "Image":
      return await recognize(request.bytes, languages)
    case "Links":
      return readLinks(request.bytes, request.url, request.robot)
    case "Sitemap":
      return parseSitemap(request.bytes, request.limits)
  }
})

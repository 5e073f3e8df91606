/**
 * `npm run bench -- decoders`: what reading untrusted inputs in decoder
 * processes (`layers/Decoders.ts`) costs per document, against the same
 * readers called in this process (the bare baseline: what the service did
 * for images before, and what a thread did for documents), in the same run.
 *
 * Inputs are made here: an HTML page and a five-page PDF of generated prose,
 * and a PNG with four lines of text drawn by sharp. For each: the median and
 * p95 of `rounds` reads one after another on a warm pool of one process, the
 * same in-process, and the first read on a cold pool (the process's start, and
 * for an image its OCR engine's).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import sharp from "sharp"
import { Decoders, languageFolder, layerProcesses } from "../../layers/Decoders.js"
import { extract } from "../../layers/extractor/Documents.js"
import { recognize } from "../../layers/extractor/Images.js"
import type { DecodeRequest } from "../../layers/extractor/Protocol.js"
import { fmt, repoRoot, type Section } from "./lib.js"

const rounds = 30

const words = "the service reads each page of the help centre and keeps its answers short clear and kind to every visitor".split(" ")
const prose = (n: number, seed: number) => Array.from({ length: n }, (_, i) => words[(i * 7 + seed * 13) % words.length]).join(" ")

const html = new TextEncoder().encode(
  `<html><head><title>Returns</title></head><body><h1>Returns</h1>${Array.from({ length: 12 }, (_, i) => `<h2>Part ${i}</h2><p>${prose(80, i)}.</p>`).join("")}</body></html>`
)

/** A PDF of `pages` pages of prose (Helvetica, no compression): catalog, pages, font, then each page and its text. */
const pdfOf = (pages: number): Uint8Array => {
  const pageObjects = Array.from({ length: pages }, (_, p) => {
    const lines = Array.from({ length: 30 }, (_, i) => prose(12, p * 30 + i))
    const stream = ["BT", "/F1 11 Tf", "60 740 Td", "14 TL", ...lines.map((l) => `(${l}) Tj T*`), "ET"].join("\n")
    return [
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + 2 * p} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
      `<< /Length ${Buffer.byteLength(stream, "latin1")} >>\nstream\n${stream}\nendstream`
    ]
  })
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${pageObjects.map((_, p) => `${4 + 2 * p} 0 R`).join(" ")}] /Count ${pages} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ...pageObjects.flat()
  ]
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, "latin1")
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Uint8Array.from(Buffer.from(out, "latin1"))
}

const pngOf = async (lines: ReadonlyArray<string>) => {
  const text = lines.map((line, i) => `<text x="30" y="${60 + i * 60}">${line}</text>`).join("")
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="${60 * lines.length + 40}"><rect width="100%" height="100%" fill="white"/><g font-family="DejaVu Sans" font-size="36" fill="black">${text}</g></svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer())
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

const timeEach = async (n: number, run: () => Promise<unknown>) => {
  const times: Array<number> = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    await run()
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95) }
}

const residentMb = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]
  return kb === undefined ? undefined : Number(kb) / 1024
}

export const decoders = async (): Promise<Section> => {
  const pdf = pdfOf(5)
  const png = await pngOf(["Refunds within 30 days", "Support opens at 9 am", "Orders ship in two days", "Call us any weekday"])
  // the in-process baseline reads the traineddata from a folder made as the pool makes its own
  const folderScope = Effect.runSync(Scope.make())
  const languages = await Effect.runPromise(Scope.extend(languageFolder(tmpdir()), folderScope))
  // the bundle's decoder process, as ops run it (the runner built `dist/`)
  const entry = pathToFileURL(join(repoRoot, "dist/decoder-process.mjs"))
  const pool = (processes: number) =>
    ManagedRuntime.make(layerProcesses({ processes, timeoutMillis: 60_000, memoryMb: 256, entry }) as Layer.Layer<Decoders>)
  const decode = (runtime: ReturnType<typeof pool>, request: DecodeRequest) => runtime.runPromise(Effect.flatMap(Decoders, (d) => d.decode(request)))

  const inputs: ReadonlyArray<{ readonly name: string; readonly request: DecodeRequest; readonly inProcess: () => Promise<unknown> }> = [
    { name: "HTML page (12 sections)", request: { _tag: "Document", request: { kind: "html", bytes: html, fallbackTitle: "f" } }, inProcess: async () => extract("html", html, "f") },
    { name: "PDF, 5 pages", request: { _tag: "Document", request: { kind: "pdf", bytes: pdf, fallbackTitle: "f" } }, inProcess: async () => extract("pdf", pdf, "f") },
    { name: "PNG, 4 lines of text (OCR)", request: { _tag: "Image", bytes: png }, inProcess: () => recognize(png, languages) }
  ]

  const lines = [
    `${rounds} reads of each, one after another; in-process: the readers called in the benchmark's own process (warmed first); pool: one warm decoder process (\`dist/decoder-process.mjs\`).`,
    "",
    "| input | in-process p50 / p95 | pool p50 / p95 | pool − in-process (p50) | ratio (p50) | cold pool, first read |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  for (const input of inputs) {
    console.log(`  ${input.name}`)
    // cold: a fresh pool's first read (the process starts; an image's OCR engine too)
    const cold = pool(1)
    const coldStart = performance.now()
    await decode(cold, input.request)
    const coldMs = performance.now() - coldStart
    await cold.dispose()
    await input.inProcess()
    await input.inProcess()
    const inProcess = await timeEach(rounds, input.inProcess)
    const warm = pool(1)
    await decode(warm, input.request)
    await decode(warm, input.request)
    const isolated = await timeEach(rounds, () => decode(warm, input.request))
    await warm.dispose()
    lines.push(
      `| ${input.name} | ${fmt(inProcess.p50, 1)} / ${fmt(inProcess.p95, 1)} ms | ${fmt(isolated.p50, 1)} / ${fmt(isolated.p95, 1)} ms | ${fmt(isolated.p50 - inProcess.p50, 1)} ms | ${(isolated.p50 / inProcess.p50).toFixed(2)}× | ${fmt(coldMs)} ms |`
    )
  }

  // a decoder process's resident memory: idle after a first small input, then with its OCR engine loaded
  const measured = pool(1)
  await decode(measured, { _tag: "CsvQa", content: "q?,a" })
  const { execFileSync } = await import("node:child_process")
  const child = Number(execFileSync("pgrep", ["-n", "-f", "decoder-process.mjs"], { encoding: "utf8" }).trim())
  const idle = await residentMb(child)
  await decode(measured, { _tag: "Image", bytes: png })
  const afterImage = await residentMb(child)
  await measured.dispose()
  const mb = (n: number | undefined) => (n === undefined ? "n/a" : `${fmt(n)} MB`)
  lines.push("", `A decoder process's resident memory: ${mb(idle)} idle, ${mb(afterImage)} with its OCR engine loaded (kept for the process's five minutes).`)
  await Effect.runPromise(Scope.close(folderScope, Exit.void))
  return { title: "Decoder processes: the cost of isolation per document", lines }
}

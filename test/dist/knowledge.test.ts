/**
 * Knowledge through the bundle (`node server.mjs` from a copy of `dist/`),
 * over real HTTP, with the `local` AI provider: every kind of source reaches
 * `indexed`, and each one loads the code the bundle keeps in a lazy chunk on
 * the way (linkedom and Readability for HTML, unpdf for PDF, sharp and
 * tesseract.js for OCR). Pages come from a site on 127.0.0.1
 * (`ALLOW_PRIVATE_URLS=true`).
 */
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { wav } from "../training/audioBytes.js"
import {
  cleanupAll,
  bootstrapWorkspace,
  databaseName,
  eventually,
  expectCall,
  htmlPage,
  type Peer,
  sendHtml,
  type Service,
  setupTimeout,
  startPeer,
  startService,
  uploadFile,
  type Workspace
} from "./support.js"

let service: Service
let ws: Workspace
let site: Peer

const pages: Record<string, string> = {
  "/shipping": htmlPage("Shipping policy", [
    ["Delivery times", "Parcels reach mainland addresses within three working days of the order being placed."],
    ["Tracking", "A tracking link is e-mailed when the parcel leaves the warehouse in Valencia."],
    ["International", "Orders outside the European Union are sent by air mail and may take up to two weeks."]
  ]),
  "/returns": htmlPage("Returns", [
    ["Return window", "Any item can be returned within thirty days when it is unused and in its box."],
    ["Refunds", "Refunds go back to the original card five days after the parcel arrives at the warehouse."]
  ]),
  "/payments": htmlPage("Payments", [
    ["Cards", "Visa, Mastercard and American Express cards are accepted at checkout for every order."],
    ["Invoices", "Companies can ask for an invoice with their tax number from the account page."]
  ]),
  "/help": htmlPage("Help centre", [
    ["Topics", '<a href="/shipping">Shipping</a> <a href="/returns">Returns</a> <a href="/payments">Payments</a>'],
    ["More", '<a href="/warranty">Warranty</a> <a href="/shipping#tracking">Tracking</a> <a href="/logo.png">Logo</a>']
  ]),
  "/warranty": htmlPage("Warranty", [
    ["Two years", "Every appliance carries a two year warranty that covers parts and labour at home."],
    ["Claims", "Warranty claims are opened from the order page with a photo of the serial number plate."]
  ])
}

/** Hostile pages: each must end indexed or failed with an error text, and the agent's next source after them. */
const hostile: ReadonlyArray<{ readonly path: string; readonly contentType: string; readonly body: string | Uint8Array; readonly ends: readonly [string, string | null] }> = [
  { path: "/hostile/empty", contentType: "text/html", body: "", ends: ["failed", "empty_content"] },
  { path: "/hostile/binary", contentType: "text/html", body: Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256), ends: ["failed", "unsupported_type"] },
  { path: "/hostile/malformed", contentType: "text/html", body: "<html><body><p>Unclosed <b>bold <i>words about parcels</p></div></span><<<>>> & more", ends: ["indexed", null] },
  { path: "/hostile/deep", contentType: "text/html", body: `<html><body><h1>Deep</h1>${"<div>".repeat(60_000)}<p>At the bottom of the page.</p>${"</div>".repeat(60_000)}</body></html>`, ends: ["indexed", null] },
  { path: "/hostile/fake.pdf", contentType: "application/pdf", body: "%PDF-1.4 this is not a PDF at all", ends: ["failed", "unsupported_type"] }
]

beforeAll(async () => {
  site = await startPeer((request, res) => {
    const bad = hostile.find((h) => h.path === request.path)
    if (bad !== undefined) {
      res.writeHead(200, { "content-type": bad.contentType })
      return res.end(bad.body)
    }
    const body = pages[request.path]
    if (body === undefined) return sendHtml(res, "<h1>Not found</h1>", 404)
    sendHtml(res, body)
  })
  service = await startService({ INGEST_CONCURRENCY: "3" })
  ws = await bootstrapWorkspace(service)
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

const agent = async (name: string, type: "support" | "training" = "support") =>
  (await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type, name } })).data.id as string

const addSource = async (agentId: string, body: Record<string, unknown>) =>
  (await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge`, 201, { key: ws.secret, body })).data

const readSource = async (agentId: string, id: string) =>
  (await expectCall(service, "GET", `/v1/agents/${agentId}/knowledge/${id}`, 200, { key: ws.secret })).data

const settled = (s: { status: string }) => s.status === "indexed" || s.status === "failed"

/** A job claimed more often than the pipeline's 3 attempts is retried by something else: a defect, not a transient failure. */
const maxAttempts = 3

/** The service's last error lines (a failed job's cause names no source), for a failure's message. */
const errorLog = () =>
  service
    .output()
    .split("\n")
    .filter((line) => line.includes(`"level":"error"`))
    .slice(-2)
    .map((line) => line.slice(0, 1000))
    .join("\n")

/**
 * Polls the sources until each one is indexed or failed (every 200 ms, 45 s at
 * most); fails early when one is claimed more than 3 times, with its log lines.
 */
const waitSettled = async (agentId: string, ids: ReadonlyArray<string>) => {
  const runaway = (sources: ReadonlyArray<any>) => sources.find((s) => s.attempts > maxAttempts)
  const sources = await eventually(
    () => Promise.all(ids.map((id) => readSource(agentId, id))),
    (sources) => sources.every(settled) || runaway(sources) !== undefined,
    { label: `sources ${ids.join(", ")} settled`, tries: 225, intervalMs: 200, timeoutMs: 45_000 }
  ).catch((error: Error) => {
    throw new Error(`${error.message}\nservice errors:\n${errorLog()}`)
  })
  const stuck = runaway(sources)
  if (stuck !== undefined) {
    throw new Error(
      `source ${stuck.id} was claimed ${stuck.attempts} times (at most ${maxAttempts} attempts) and is still ${stuck.status} ` +
        `in phase ${stuck.phase}: ${JSON.stringify(stuck)}\nservice errors:\n${errorLog()}`
    )
  }
  return sources
}

/** The agent's Q&A, questions and answers as one text (what ingestion made of the document). */
const qaText = async (agentId: string) => {
  const list = await expectCall(service, "GET", `/v1/agents/${agentId}/qa?limit=100`, 200, { key: ws.secret })
  return (list.data as Array<{ question: string; answer: string }>).map((q) => `${q.question} ${q.answer}`).join("\n")
}

/** A one-page PDF whose text is `lines` (Helvetica, no compression) and whose Info title is `title`. */
const pdfOf = (title: string, lines: ReadonlyArray<string>): Uint8Array => {
  const escape = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`)
  const stream = ["BT", "/F1 14 Tf", "72 720 Td", "18 TL", ...lines.map((l) => `(${escape(l)}) Tj T*`), "ET"].join("\n")
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(stream, "latin1")} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    `<< /Title (${escape(title)}) >>`
  ]
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, "latin1")
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  out += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Uint8Array.from(Buffer.from(out, "latin1"))
}

/** A PNG of one line of black text on white, drawn by sharp from SVG (as test/knowledge/ocr.test.ts). */
const pngOf = async (text: string) =>
  Uint8Array.from(
    await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="200">` +
          `<rect width="100%" height="100%" fill="white"/>` +
          `<text x="40" y="120" font-family="DejaVu Sans, sans-serif" font-size="60" fill="black">${text}</text></svg>`
      )
    )
      .png()
      .toBuffer()
  )

describe(`knowledge through the bundle (${databaseName})`, () => {
  it("an HTML page by URL is read (linkedom + Readability) and indexed", async () => {
    const agentId = await agent("Web page")
    const created = await addSource(agentId, { type: "url", url: `${site.origin}/shipping` })
    expect(created).toMatchObject({ object: "knowledge_source", type: "url", status: "pending" })
    const [done] = await waitSettled(agentId, [created.id])
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    expect(done.title).toBe("Shipping policy")
    expect(done.size_bytes).toBeGreaterThan(0)
    expect(site.received.some((r) => r.path === "/shipping")).toBe(true)
    // Readability kept the article, not the navigation or the footer
    const qa = await qaText(agentId)
    expect(qa).toContain("three working days")
    expect(qa).not.toContain("Copyright Example Shop")
  }, 120_000)

  it("a PDF upload is read (unpdf) and indexed", async () => {
    const agentId = await agent("PDF")
    const pdf = pdfOf("Kiln manual", [
      "Firing schedule",
      "The kiln must cool for twelve hours before the door is opened.",
      "Glazed pieces are fired at one thousand two hundred degrees."
    ])
    const fileId = await uploadFile(service, ws.secret, "kiln.pdf", "application/pdf", pdf)
    const created = await addSource(agentId, { type: "file_id", file_id: fileId, title: "Kiln manual" })
    const [done] = await waitSettled(agentId, [created.id])
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    expect(done.size_bytes).toBe(pdf.length)
    // the page's text is what the agent's passages hold (no sentence of it has the shape of a generated question)
    const found = await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge/search`, 200, {
      key: ws.secret,
      body: { query: "How long must the kiln cool before the door is opened?", limit: 5 }
    })
    const hits = (found.data as { hits: Array<{ kind: string; text: string; source_id: string }> }).hits
    const passage = hits.find((hit) => hit.kind === "chunk" && hit.source_id === created.id)
    expect(passage?.text, JSON.stringify(hits)).toContain("twelve hours")
  }, 120_000)

  it("an image goes through OCR (sharp + tesseract.js) and is indexed with the text drawn in it", async () => {
    const agentId = await agent("OCR")
    const drawn = "Refunds take ten days"
    const png = await pngOf(drawn)
    const fileId = await uploadFile(service, ws.secret, "notice.png", "image/png", png)
    const created = await addSource(agentId, { type: "file_id", file_id: fileId, title: "Notice" })
    const [done] = await waitSettled(agentId, [created.id])
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    // the recognised text answers a question about it
    const reply = await expectCall(service, "POST", `/v1/agents/${agentId}/messages`, 201, {
      key: ws.secret,
      body: { message: "How long do refunds take?", stream: false }
    })
    expect(JSON.stringify(reply.data).replace(/\s+/g, " ")).toContain(drawn)
  }, 150_000)

  it("a Markdown file is indexed", async () => {
    const agentId = await agent("Markdown")
    const markdown = [
      "# Studio rules",
      "",
      "## Opening hours",
      "",
      "The studio opens at nine in the morning and closes at eight in the evening.",
      "",
      "## Clay",
      "",
      "Members buy clay at the front desk; outside clay is not allowed in the wheels room."
    ].join("\n")
    const fileId = await uploadFile(service, ws.secret, "rules.md", "text/markdown", new TextEncoder().encode(markdown))
    const created = await addSource(agentId, { type: "file_id", file_id: fileId })
    const [done] = await waitSettled(agentId, [created.id])
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    expect(await qaText(agentId)).toContain("nine in the morning")
  }, 120_000)

  it("a CSV of Q&A is imported and indexed", async () => {
    const agentId = await agent("CSV")
    const csv = [
      "question,answer,category",
      "Do you ship to the Canary Islands?,Yes; customs fees are paid on delivery.,Shipping",
      '"Can I change my order, once placed?",Within one hour of placing it.,Orders'
    ].join("\n")
    const created = await addSource(agentId, { type: "csv_qa", content: csv, title: "FAQ" })
    const [done] = await waitSettled(agentId, [created.id])
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    const qa = await qaText(agentId)
    expect(qa).toContain("Do you ship to the Canary Islands?")
    expect(qa).toContain("Can I change my order, once placed?")
  }, 60_000)

  it("a retrieval test after ingestion ranks the Q&A and passages found, with scores and their sources", async () => {
    const agentId = await agent("Search")
    const faq = await addSource(agentId, {
      type: "csv_qa",
      title: "FAQ",
      content: "question,answer\nHow long does delivery take?,Parcels arrive within three working days.\n"
    })
    const text = await addSource(agentId, {
      type: "text",
      title: "Kiln rules",
      content: "The kiln must cool for twelve hours before the door is opened."
    })
    const done = await waitSettled(agentId, [faq.id, text.id])
    expect(done.map((s) => s.status), JSON.stringify(done)).toEqual(["indexed", "indexed"])
    const search = (query: string) =>
      expectCall(service, "POST", `/v1/agents/${agentId}/knowledge/search`, 200, { key: ws.secret, body: { query, limit: 10 } })

    const found = (await search("how many days until my parcel arrives")).data
    expect(found).toMatchObject({ object: "knowledge_search", agent_id: agentId, threshold: expect.any(Number) })
    expect(found.hits[0], JSON.stringify(found.hits)).toMatchObject({
      kind: "qa",
      question: "How long does delivery take?",
      source_id: faq.id,
      source_title: "FAQ",
      relevant: true
    })
    const kiln = (await search("how long must the kiln cool")).data.hits as Array<any>
    expect(kiln.find((hit) => hit.kind === "chunk"), JSON.stringify(kiln)).toMatchObject({ source_id: text.id, source_title: "Kiln rules" })
    for (const hit of [...found.hits, ...kiln]) expect(hit.relevant).toBe(hit.score >= found.threshold)
  }, 60_000)

  it("an audio lesson source with its transcript is indexed", async () => {
    const agentId = await agent("Course", "training")
    const module = await expectCall(service, "POST", `/v1/agents/${agentId}/modules`, 201, { key: ws.secret, body: { title: "Basics" } })
    const lesson = await expectCall(service, "POST", `/v1/agents/${agentId}/lessons`, 201, {
      key: ws.secret,
      body: { module_id: module.data.id, title: "Loading the kiln" }
    })
    const fileId = await uploadFile(service, ws.secret, "talk.wav", "audio/wav", wav(2))
    const created = await expectCall(service, "POST", `/v1/agents/${agentId}/sources`, 201, {
      key: ws.secret,
      body: {
        lesson_id: lesson.data.id,
        type: "audio",
        file_id: fileId,
        title: "Kiln talk",
        transcript: "Load the kiln from the back shelf first and never open it above two hundred degrees."
      }
    })
    expect(created.data).toMatchObject({ type: "audio", title: "Kiln talk" })
    const sources = await eventually(
      async () =>
        (await expectCall(service, "GET", `/v1/agents/${agentId}/sources?lesson_id=${lesson.data.id}`, 200, { key: ws.secret }))
          .data as Array<any>,
      (list) => list.length > 0 && list.every(settled),
      { label: "lesson source settled", tries: 300, intervalMs: 200, timeoutMs: 60_000 }
    )
    expect(sources[0], JSON.stringify(sources[0])).toMatchObject({ id: created.data.id, status: "indexed" })
  }, 90_000)

  it("a batch of URLs is processed in order and every source is indexed", async () => {
    const agentId = await agent("Batch")
    const urls = ["/returns", "/payments", "/warranty"].map((p) => `${site.origin}${p}`)
    const batch = await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge/batch`, 201, {
      key: ws.secret,
      body: { urls },
      headers: { "idempotency-key": crypto.randomUUID() }
    })
    expect(batch.data.count).toBe(3)
    const ids = (batch.data.sources as Array<{ id: string }>).map((s) => s.id)
    const done = await waitSettled(agentId, ids)
    for (const source of done) expect(source.status, JSON.stringify(source)).toBe("indexed")
    expect(new Set(done.map((s) => s.source_ref))).toEqual(new Set(urls))
    const qa = await qaText(agentId)
    expect(qa).toContain("thirty days")
    expect(qa).toContain("American Express")
    expect(qa).toContain("two year warranty")
  }, 150_000)

  it("hostile pages each end indexed or failed with an error text, and the agent's next source is indexed after them", async () => {
    const agentId = await agent("Hostile")
    const ids: Array<string> = []
    for (const { path } of hostile) ids.push((await addSource(agentId, { type: "url", url: `${site.origin}${path}` })).id)
    ids.push((await addSource(agentId, { type: "url", url: `${site.origin}/returns` })).id)
    const done = await waitSettled(agentId, ids)
    expect(done.map((s) => [s.status, s.error_code])).toEqual([...hostile.map((h) => h.ends), ["indexed", null]])
    for (const failed of done.filter((s) => s.status === "failed")) expect(failed.error).toMatch(/^[^\n]{10,200}$/)
  }, 150_000)

  it("a url source refreshed after its page changed: indexed again with the new text, knowledge.source.updated; then a round of every page", async () => {
    const agentId = await agent("Refreshed")
    pages["/opening"] = htmlPage("Opening hours", [["Hours", "The shop opens from nine to five on weekdays only."]])
    const created = await addSource(agentId, { type: "url", url: `${site.origin}/opening` })
    const [done] = await waitSettled(agentId, [created.id])
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    pages["/opening"] = htmlPage("Opening hours", [["Hours", "The shop now opens from eight to eight, every day of the week."]])
    const asked = await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge/${created.id}/refresh`, 202, { key: ws.secret })
    expect(asked.data.refresh.status).toBe("queued")
    const after = await eventually(
      () => readSource(agentId, created.id),
      (s) => s.refresh.status === "idle" && s.refresh.changed_at !== null,
      { label: "the refresh re-indexed the page", tries: 225, intervalMs: 200, timeoutMs: 45_000 }
    )
    expect(after).toMatchObject({ status: "indexed", refresh: { gone_since: null } })
    const qa = await qaText(agentId)
    expect(qa).toContain("eight to eight")
    expect(qa).not.toContain("nine to five")

    // a round of every page: unchanged now, the page is read again and nothing re-indexed
    const round = await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge/refresh`, 202, { key: ws.secret })
    expect(round.data).toMatchObject({ object: "knowledge_refresh_round", agent_id: agentId })
    const checked = await eventually(
      () => readSource(agentId, created.id),
      (s) => s.refresh.status === "idle" && s.refresh.checked_at >= round.data.started_at,
      { label: "the round read the page again", tries: 225, intervalMs: 200, timeoutMs: 45_000 }
    )
    expect(checked.refresh.changed_at).toBe(after.refresh.changed_at)
  }, 150_000)

  it("a site crawled from its help page: each page kept once as a source and indexed, the skips and failures counted, its schedule set and stopped", async () => {
    const agentId = await agent("Crawled")
    const created = await expectCall(service, "POST", `/v1/agents/${agentId}/crawls`, 201, {
      key: ws.secret,
      body: { url: `${site.origin}/help`, schedule: "weekly" }
    })
    expect(created.data).toMatchObject({ schedule: "weekly", scheduled_by: null })
    expect(Date.parse(created.data.next_run_at) - Date.parse(created.data.created_at)).toBe(7 * 24 * 60 * 60 * 1000)
    const crawl = await eventually(
      async () => (await expectCall(service, "GET", `/v1/agents/${agentId}/crawls/${created.data.id}`, 200, { key: ws.secret })).data,
      (c) => c.status === "completed" && c.pages.indexing === 0,
      { label: "crawl completed and indexed", tries: 225, intervalMs: 200, timeoutMs: 45_000 }
    )
    // the help page and the four it links to; its menu's "/" and "/about" answer 404; the logo is no page
    expect(crawl.pages).toMatchObject({ kept: 5, indexed: 5, failed: 2, skipped: { not_html: 1 } })
    const sources = await expectCall(service, "GET", `/v1/agents/${agentId}/knowledge?limit=100`, 200, { key: ws.secret })
    expect(new Set(sources.data.map((s: any) => [s.status, new URL(s.source_ref).pathname].join(" ")))).toEqual(
      new Set(["/help", "/shipping", "/returns", "/payments", "/warranty"].map((p) => `indexed ${p}`))
    )
    expect(await qaText(agentId)).toContain("two year warranty")
    // its schedule stopped
    const stopped = await expectCall(service, "PATCH", `/v1/agents/${agentId}/crawls/${created.data.id}`, 200, {
      key: ws.secret,
      body: { schedule: "off" }
    })
    expect(stopped.data).toMatchObject({ schedule: "off", next_run_at: null })
  }, 150_000)
})

/**
 * The rest of the service through the bundle (`node server.mjs` from a copy of
 * `dist/`), one started server for the file, over real HTTP on 127.0.0.1:
 * a streamed reply read by an independent SSE parser and resumed after a
 * dropped connection; the chat widget's config and a reply's rating; a form's config, its submit on the forms port and the
 * component script; a webhook delivered to a local receiver and verified with
 * the SDK; a reply's outcome and the agent's insights; an evaluation run twice, edited, and run by itself when
 * the knowledge changed; the Scalar page at /docs (its lazy chunk); the bundled admin CLI; a live hand-off's member reply on
 * the widget's events stream. E-mail
 * has a server of its own (email.test.ts): SMTP_URL changes how it starts.
 */
import { readdirSync, readFileSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as OpenApi from "@effect/platform/OpenApi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../schema/Api.js"
import { elementPath } from "../../src/forms/ElementBundle.js"
import { verifyWebhook } from "../../src/sdk/webhooks.js"
import {
  call,
  cleanupAll,
  bootstrapWorkspace,
  cliJson,
  databaseName,
  eventTypes,
  eventually,
  expectCall,
  freePort,
  host,
  type Peer,
  readSse,
  runCli,
  sendHtml,
  type Service,
  setupTimeout,
  startPeer,
  startService,
  tokenText,
  type Workspace
} from "./support.js"

let service: Service
let ws: Workspace & { readonly forms: string }
let formsPort: number

beforeAll(async () => {
  formsPort = await freePort()
  service = await startService({
    FORMS_PORT: String(formsPort),
    // a revoked key is refused at once (the CLI test revokes one)
    API_KEY_CACHE_SECONDS: "0",
    // an evaluation's automatic run starts a second after the knowledge changed, not a minute
    EVALUATION_DEBOUNCE_MS: "1000"
  })
  ws = await bootstrapWorkspace(service)
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

const newAgent = async (name: string) =>
  (await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "support", name } })).data.id as string

describe(`the API through the bundle (${databaseName})`, () => {
  it("a streamed reply, read by eventsource-parser, dropped after two tokens and resumed after Last-Event-ID", async () => {
    const agentId = await newAgent("Reply bot")
    await expectCall(service, "POST", `/v1/agents/${agentId}/qa`, 201, {
      key: ws.secret,
      body: {
        question: "How long does delivery take?",
        answer: "Orders arrive within five business days anywhere in Europe, and tracking is e-mailed when the parcel leaves."
      }
    })
    const tokens = (n: number) => (events: ReadonlyArray<{ data: any }>) => events.filter((e) => e.data.type === "token").length >= n
    const dropped = await readSse(`${service.base}/v1/agents/${agentId}/messages`, {
      key: ws.secret,
      body: { message: "How long does delivery take?" },
      stopWhen: tokens(2)
    })
    expect(dropped.status, dropped.text).toBe(200)
    expect(dropped.contentType).toMatch(/^text\/event-stream/)
    expect(eventTypes(dropped.events)).toEqual(["conversation", "token", "token"])
    const { conversation_id, message_id } = dropped.events[0]!.data
    expect(conversation_id).toMatch(/^cnv_/)
    const lastId = dropped.events.at(-1)!.id!
    expect(lastId).toBe("3")

    const path = `${service.base}/v1/conversations/${conversation_id}/messages/${message_id}/stream`
    const rest = await readSse(path, { key: ws.secret, headers: { "last-event-id": lastId } })
    expect(rest.status, rest.text).toBe(200)
    expect(eventTypes(rest.events).at(-1)).toBe("done")
    expect(eventTypes(rest.events)).toContain("sources")

    // the whole reply replayed: what was read before the drop, then exactly the rest
    const full = await readSse(path, { key: ws.secret })
    expect(full.events.slice(0, 3)).toEqual(dropped.events)
    expect(full.events.slice(3)).toEqual(rest.events)
    expect(full.events.map((e) => e.id)).toEqual(full.events.map((_, i) => String(i + 1)))
    const answer = tokenText(full.events)
    expect(answer).toContain("five business days")

    const conversation = await expectCall(service, "GET", `/v1/conversations/${conversation_id}`, 200, { key: ws.secret })
    expect(conversation.data.messages.map((m: any) => m.content)).toEqual(["How long does delivery take?", answer])
  })

  it("a live hand-off: escalated from the widget, a member's reply on the ticket arrives on the conversation's events stream", async () => {
    const shop = "https://shop.example.com"
    const agentId = (
      await expectCall(service, "POST", "/v1/agents", 201, {
        key: ws.secret,
        body: { type: "support", name: "Hand-off bot", allowed_origins: [shop], widget: { handoff: true } }
      })
    ).data.id as string
    const widgetKey = (
      await expectCall(service, "POST", "/v1/keys", 201, { key: ws.secret, body: { kind: "widget", scopes: ["widget:chat"] } })
    ).data.secret as string
    const headers = { origin: shop }
    const base = `/widget/v1/agents/${agentId}/conversations`
    const conversationId = (await expectCall(service, "POST", base, 201, { key: widgetKey, headers, body: {} })).data.id as string
    const escalation = await expectCall(service, "POST", `${base}/${conversationId}/escalate`, 201, {
      key: widgetKey,
      headers,
      body: { visitor_email: "vera@example.com" }
    })
    expect(escalation.data.handoff.status).toBe("requested")
    const ticket = escalation.data.ticket.public_id as string
    // followed while the member answers; its events are kept, so it sees the answer however the two interleave
    const stream = readSse(`${service.base}${base}/${conversationId}/events`, {
      key: widgetKey,
      headers,
      stopWhen: (events) => events.some((e) => e.data.type === "message")
    })
    await expectCall(service, "POST", `/v1/tickets/${ticket}/messages`, 201, { key: ws.secret, body: { body: "A person here." } })
    const read = await stream
    expect(read.status, read.text).toBe(200)
    expect(read.events.map((e) => [e.id, e.data.type])).toEqual([
      ["1", "handoff"],
      ["2", "handoff"],
      ["3", "message"]
    ])
    expect(read.events[2]!.data.message).toMatchObject({ role: "member", content: "A person here." })
    const released = await expectCall(service, "POST", `/v1/conversations/${conversationId}/release`, 200, { key: ws.secret })
    expect(released.data.handoff.status).toBe("closed")
  })

  it("a form: config with a forms key (ETag), submit on the forms port, the ticket it made, the component script", async () => {
    const agentId = await newAgent("Form desk")
    const origin = "https://shop.example.com"
    const form = await expectCall(service, "POST", "/v1/forms", 201, {
      key: ws.secret,
      body: {
        title: { en: "Contact us", es: "Contáctanos" },
        fields: [
          { id: "name", type: "text", label: { en: "Name" }, required: true, max_length: 100 },
          { id: "email", type: "email", label: { en: "E-mail" }, required: true },
          { id: "subject", type: "text", label: { en: "Subject" } },
          { id: "body", type: "textarea", label: { en: "Message" }, required: true, min_length: 5 }
        ],
        submit_label: { en: "Send" },
        success_message: { en: "Thanks!" },
        target: { type: "ticket", agent_id: agentId },
        settings: { allowed_origins: [origin], honeypot_field: "website", rate_limit: { max: 100, window_seconds: 60 } }
      }
    })
    const formId = form.data.id as string
    expect(formId).toMatch(/^frm_/)
    const formsKey = ws.forms
    expect(formsKey).toMatch(/^pk_test_/)
    const config = await call(service, "GET", `/v1/forms/${formId}/config`, { headers: { "service-api-key": formsKey, origin } })
    expect(config.status, config.text).toBe(200)
    expect(config.body.data).toMatchObject({ id: formId, object: "form_config" })
    expect(config.body.data.fields.map((f: any) => f.id)).toEqual(["name", "email", "subject", "body"])
    expect(config.text).not.toContain("allowed_origins")
    const etag = config.headers.get("etag")
    expect(etag).not.toBeNull()
    const revalidated = await call(service, "GET", `/v1/forms/${formId}/config`, {
      headers: { "service-api-key": formsKey, origin, "if-none-match": etag! }
    })
    expect(revalidated.status).toBe(304)

    const submitted = await call(service, "POST", `/api/forms/${formId}/submit`, {
      base: `http://${host}:${formsPort}`,
      headers: { "service-api-key": formsKey, origin },
      body: { fields: { name: "Ana Pérez", email: "ana@example.com", subject: "Where is my order?", body: "It has not arrived yet." } }
    })
    expect(submitted.status, submitted.text).toBe(201)
    const publicId = submitted.body.data.ticket.public_id as string
    expect(publicId).toMatch(/^tck_/)
    const ticket = await expectCall(service, "GET", `/v1/tickets/${publicId}`, 200, { key: ws.secret })
    expect(ticket.data).toMatchObject({ origin: "form", agent_id: agentId, status: "open", subject: "Where is my order?" })

    const element = await fetch(`${service.base}${elementPath}`)
    expect(element.status).toBe(200)
    expect(element.headers.get("content-type")).toMatch(/^text\/javascript/)
    const script = await element.text()
    expect(script).toContain("service-form")
    expect(script.length).toBeGreaterThan(1000)
  })

  it("the chat widget: its config (ETag, 304), a reply rated through the widget and through /v1, read back", async () => {
    const origin = "https://shop.example.com"
    const agent = await expectCall(service, "POST", "/v1/agents", 201, {
      key: ws.secret,
      body: {
        type: "support",
        name: "Chat desk",
        welcome_message: "Hello!",
        allowed_origins: [origin],
        widget: { display_name: "Ana", color: "#112233" }
      }
    })
    const agentId = agent.data.id as string
    const widget = (await expectCall(service, "POST", "/v1/keys", 201, { key: ws.secret, body: { kind: "widget", scopes: ["widget:chat"] } }))
      .data.secret as string
    const path = `/widget/v1/agents/${agentId}`
    const config = await call(service, "GET", `${path}/config`, { key: widget, headers: { origin } })
    expect(config.status, config.text).toBe(200)
    expect(config.body.data).toEqual({
      object: "widget_config",
      agent_id: agentId,
      name: "Ana",
      welcome_message: "Hello!",
      color: "#112233",
      launcher_position: "bottom-right",
      lead_capture: "off",
      handoff: false
    })
    const etag = config.headers.get("etag")!
    const revalidated = await call(service, "GET", `${path}/config`, { key: widget, headers: { origin, "if-none-match": etag } })
    expect(revalidated.status).toBe(304)

    const conversation = (await expectCall(service, "POST", `${path}/conversations`, 201, { key: widget, headers: { origin }, body: {} }))
      .data.id as string
    const reply = await expectCall(service, "POST", `${path}/conversations/${conversation}/messages`, 201, {
      key: widget,
      headers: { origin },
      body: { message: "Hello there", stream: false }
    })
    const rated = await expectCall(service, "POST", `${path}/conversations/${conversation}/messages/${reply.data.id}/feedback`, 200, {
      key: widget,
      headers: { origin },
      body: { rating: "down", comment: "Not helpful" }
    })
    expect(rated.data.feedback).toMatchObject({ rating: "down", comment: "Not helpful" })
    const changed = await expectCall(service, "POST", `/v1/conversations/${conversation}/messages/${reply.data.id}/feedback`, 200, {
      key: ws.secret,
      body: { rating: "up" }
    })
    expect(changed.data.feedback).toMatchObject({ rating: "up", comment: null })
    const read = await expectCall(service, "GET", `/v1/conversations/${conversation}`, 200, { key: ws.secret })
    expect(read.data.messages.map((m: any) => m.feedback?.rating ?? null)).toEqual([null, "up"])
  })

  it("insights: a reply with nothing to draw on is a fallback, rated down, counted and listed unanswered", async () => {
    const agent = await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "support", name: "Empty desk" } })
    const agentId = agent.data.id as string
    const reply = await expectCall(service, "POST", `/v1/agents/${agentId}/messages`, 201, {
      key: ws.secret,
      body: { message: "Do you ship to Canada?", stream: false }
    })
    const conversation = reply.data.conversation_id as string
    expect(reply.data.outcome).toBe("fallback")
    await expectCall(service, "POST", `/v1/conversations/${conversation}/messages/${reply.data.id}/feedback`, 200, {
      key: ws.secret,
      body: { rating: "down", comment: "No answer" }
    })
    const insights = await expectCall(service, "GET", `/v1/agents/${agentId}/insights`, 200, { key: ws.secret })
    expect(insights.data.totals).toEqual({
      conversations: 1,
      replies: { answered: 0, fallback: 1, handed_off: 0 },
      ratings: { up: 0, down: 1 },
      handoffs: 0
    })
    expect(insights.data.unanswered).toMatchObject([{ question: "Do you ship to Canada?", count: 1, conversation_ids: [conversation] }])
    expect(insights.data.rated_down).toMatchObject([{ message_id: reply.data.id, comment: "No answer" }])
    const refused = await call(service, "GET", `/v1/agents/${agentId}/insights?from=2026-02-30`, { key: ws.secret })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "from" })
  })

  it("evaluations: two cases the knowledge holds and one it does not complete with two passed; a second run is kept beside the first", async () => {
    const agentId = await newAgent("Evaluated desk")
    await expectCall(service, "POST", `/v1/agents/${agentId}/qa`, 201, {
      key: ws.secret,
      body: { question: "How long does delivery take?", answer: "Orders arrive within five business days." }
    })
    await expectCall(service, "POST", `/v1/agents/${agentId}/qa`, 201, {
      key: ws.secret,
      body: { question: "Can I return an item?", answer: "You can send any item back within 30 days for a full refund." }
    })
    const created = await expectCall(service, "POST", `/v1/agents/${agentId}/evaluations`, 201, {
      key: ws.secret,
      body: {
        name: "Basics",
        cases: [
          { question: "How long does delivery take?", expect: { contains: "five business days" } },
          { question: "Can I return an item?", expect: { contains: "30 days" } },
          { question: "Do you ship to Canada?", expect: { contains: "we ship to Canada" } }
        ]
      }
    })
    const evaluationId = created.data.id as string
    const runPath = (id: string) => `/v1/agents/${agentId}/evaluations/${evaluationId}/runs/${id}`
    const ended = (id: string) =>
      eventually(
        async () => (await expectCall(service, "GET", runPath(id), 200, { key: ws.secret })).data,
        (run) => run.status === "completed" || run.status === "failed",
        { label: "evaluation run ended" }
      )
    const first = await ended(created.data.latest_run.id)
    expect(first).toMatchObject({ status: "completed", passed: 2, total: 3, score: 0.6667 })
    expect(first.results.map((r: any) => r.passed)).toEqual([true, true, false])
    const again = await expectCall(service, "POST", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs`, 201, { key: ws.secret })
    const second = await ended(again.data.id)
    expect(second).toMatchObject({ status: "completed", passed: 2 })
    const runs = await expectCall(service, "GET", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs`, 200, { key: ws.secret })
    expect(runs.data.map((r: any) => r.id)).toEqual([second.id, first.id])
    const refused = await call(service, "POST", `/v1/agents/${agentId}/evaluations`, { key: ws.secret, body: { name: "X", cases: [] } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "cases" })

    // edited to run by itself: a new Q&A item answers the third case, and a run follows (trigger knowledge_change)
    const evaluationPath = `/v1/agents/${agentId}/evaluations/${evaluationId}`
    const edited = await expectCall(service, "PATCH", evaluationPath, 200, {
      key: ws.secret,
      body: { name: "Basics, watched", run_on_knowledge_change: true }
    })
    expect(edited.data).toMatchObject({ name: "Basics, watched", run_on_knowledge_change: true, auto_run_skipped_at: null })
    const unknown = await call(service, "PATCH", evaluationPath, { key: ws.secret, body: { nmae: "X" } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toMatchObject({ code: "parameter_invalid", param: "nmae" })
    await expectCall(service, "POST", `/v1/agents/${agentId}/qa`, 201, {
      key: ws.secret,
      body: { question: "Do you ship to Canada?", answer: "Yes, we ship to Canada within ten days." }
    })
    const automatic = await eventually(
      async () => (await expectCall(service, "GET", evaluationPath, 200, { key: ws.secret })).data.latest_run,
      (run) => run.trigger === "knowledge_change" && (run.status === "completed" || run.status === "failed"),
      { label: "automatic evaluation run ended" }
    )
    expect(automatic).toMatchObject({ status: "completed", passed: 3, total: 3, score: 1 })
  })

  it("a webhook is delivered to a local receiver and its signature verifies with the SDK", async () => {
    const receiver = await startPeer((_request, res) => void res.writeHead(200).end("thanks"))
    const subscription = await expectCall(service, "POST", "/v1/webhooks", 201, {
      key: ws.secret,
      body: { url: `${receiver.origin}/hooks`, events: ["agent.created"] }
    })
    const secret = subscription.data.secret as string
    expect(secret).toMatch(/^whsec_/)
    const agentId = await newAgent("Hooked")
    const test = await call(service, "POST", `/v1/webhooks/${subscription.data.id}/test`, { key: ws.secret })
    expect(test.status, test.text).toBeLessThan(300)

    const received = await eventually(
      async () => receiver.received,
      (all) => all.length >= 2,
      { label: "two deliveries received", tries: 300, intervalMs: 100, timeoutMs: 30_000 }
    )
    const events = received.map((r) => {
      expect(r.method).toBe("POST")
      expect(r.path).toBe("/hooks")
      return verifyWebhook(r.body, r.headers["service-signature"] as string | undefined, secret) as any
    })
    const created = events.find((e) => e.type === "agent.created")
    expect(created).toMatchObject({ api_version: "v1", workspace_id: ws.id, data: { agent: { id: agentId, name: "Hooked" } } })
    expect(created.id).toMatch(/^evt_/)
    expect(events.map((e) => e.type)).toContain("webhook.test")
    // a body altered in transit does not verify
    expect(() => verifyWebhook(received[0]!.body.replace("v1", "v2"), received[0]!.headers["service-signature"] as string, secret)).toThrow()

    const deliveries = await eventually(
      async () => (await expectCall(service, "GET", `/v1/webhooks/${subscription.data.id}/deliveries?limit=10`, 200, { key: ws.secret })).data,
      (list: Array<any>) => list.length >= 2 && list.every((d) => d.status === "succeeded"),
      { label: "deliveries succeeded", tries: 100, intervalMs: 100, timeoutMs: 15_000 }
    )
    expect(deliveries.every((d: any) => d.response_status === 200)).toBe(true)
  })

  it("/docs serves the Scalar reference (a lazy chunk) and /docs/errors the error codes", async () => {
    const docs = await fetch(`${service.base}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
    const page = await docs.text()
    expect(page.toLowerCase()).toContain("scalar")
    expect(page).toContain("/v1/agents")
    const errors = await fetch(`${service.base}/docs/errors`)
    expect(errors.status).toBe(200)
    expect(await errors.text()).toContain("invalid_api_key")
  })

  // the bundle runs from a copy outside the project: the reference's Markdown (docs/reference) is in it, read at build
  it("/v1/openapi.json is the sources' document, with the reference's Markdown the build put in the bundle", async () => {
    const served = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as OpenApi.OpenAPISpec
    expect(served).toEqual(JSON.parse(JSON.stringify(OpenApi.fromApi(Api))))
    const system = served.tags.find((tag) => tag.name === "System")
    expect(system?.description).toContain("| `DATABASE_URL` |")
  })

  it("the keys API: a key created (value shown once, again to its Idempotency-Key's retry), listed without its value, revoked and refused next", async () => {
    const create = { key: ws.secret, body: { kind: "secret", name: "nightly" }, headers: { "idempotency-key": "dist-keys-1" } }
    const created = await expectCall(service, "POST", "/v1/keys", 201, create)
    const value: string = created.data.secret
    expect(value).toMatch(/^sk_test_/)
    // the retry's answer comes from the record, where it is kept sealed
    const retried = await call(service, "POST", "/v1/keys", create)
    expect(retried.headers.get("idempotent-replayed")).toBe("true")
    expect(retried.body.data.secret).toBe(value)
    await expectCall(service, "GET", "/v1/agents", 200, { key: value })
    const listed = await expectCall(service, "GET", "/v1/keys?limit=100", 200, { key: ws.secret })
    const row = listed.data.find((k: any) => k.id === created.data.id)
    expect(row.redacted).toBe(`sk_test_…${value.slice(-4)}`)
    expect(JSON.stringify(listed)).not.toContain(value)
    await expectCall(service, "DELETE", `/v1/keys/${created.data.id}`, 200, { key: ws.secret })
    const refused = await expectCall(service, "GET", "/v1/agents", 401, { key: value })
    expect(refused.error.code).toBe("invalid_api_key")
  })

  it("/console serves the admin console built into dist/console (its entry and its pages' chunks), under a strict Content-Security-Policy", async () => {
    const page = await fetch(`${service.base}/console`)
    expect(page.status).toBe(200)
    const csp = page.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    const html = await page.text()
    expect(html).toContain("/console/app.js")
    const script = await fetch(`${service.base}/console/app.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toMatch(/javascript/)
    // the file the build wrote, not a bundle made by the first request
    expect(Buffer.from(await script.arrayBuffer()).equals(readFileSync(new URL("../../dist/console/app.js", import.meta.url)))).toBe(true)
    // the pages' chunks beside it, each served as built, with the same headers; a name the build gave no file is 404
    const chunks = readdirSync(new URL("../../dist/console/", import.meta.url)).filter((file) => file.startsWith("chunk-"))
    expect(chunks.length).toBeGreaterThan(1)
    for (const file of chunks) {
      const chunk = await fetch(`${service.base}/console/${file}`)
      expect(chunk.status, file).toBe(200)
      expect(chunk.headers.get("content-type")).toMatch(/javascript/)
      expect(chunk.headers.get("content-security-policy")).toBe(page.headers.get("content-security-policy"))
      expect(Buffer.from(await chunk.arrayBuffer()).equals(readFileSync(new URL(`../../dist/console/${file}`, import.meta.url)))).toBe(true)
    }
    expect((await fetch(`${service.base}/console/chunk-NOTBUILT0.js`)).status).toBe(404)
    expect((await fetch(`${service.base}/console/..%2Fserver.mjs`)).status).toBe(404)
  })

  it("dist/cli.mjs: help, workspaces and keys (create, list, revoke), ingest of a URL list", async () => {
    // independent commands side by side: each start of the CLI costs seconds on a busy machine
    const [help, denied, other] = await Promise.all([
      runCli(service, ["--help"]),
      // a wrong admin token is one line on stderr and exit code 1
      runCli(service, ["workspaces", "list", "--json"], { ADMIN_TOKEN: "not-the-admin-token-0123456789" }),
      cliJson(service, ["workspaces", "create", "--name", "CLI e2e", "--owner-email", "cli@dist-e2e.test", "--plan", "pro"])
    ])
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain("workspaces")
    expect(help.stdout).toContain("ingest")
    expect(denied.code).toBe(1)
    expect(denied.stderr.trim().split("\n")).toHaveLength(1)

    expect(other).toMatchObject({ name: "CLI e2e", owner_email: "cli@dist-e2e.test", plan: "pro" })
    expect(other.id).toMatch(/^ws_/)
    const created = await cliJson(service, ["keys", "create", "--workspace", other.id, "--kind", "secret", "--environment", "test", "--name", "to revoke"])
    expect(created.secret).toMatch(/^sk_test_/)
    const [listed, keys] = await Promise.all([cliJson(service, ["workspaces", "list"]), cliJson(service, ["keys", "list", "--workspace", other.id])])
    expect(listed.map((w: any) => w.id)).toEqual(expect.arrayContaining([ws.id, other.id]))
    const key = keys.find((k: any) => k.name === "to revoke")
    expect(key).toMatchObject({ id: created.key.id, kind: "secret", environment: "test", revoked_at: null })
    expect(JSON.stringify(keys)).not.toContain(created.secret)
    expect((await call(service, "GET", "/v1/agents", { key: created.secret })).status).toBe(200)
    const revoked = await cliJson(service, ["keys", "revoke", "--key", key.id])
    expect(revoked.revoked_at).not.toBeNull()
    const refused = await call(service, "GET", "/v1/agents", { key: created.secret })
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe("invalid_api_key")

    // plain text pages: this test is about the CLI, HTML has its own in knowledge.test.ts
    const site: Peer = await startPeer((request, res) => {
      if (request.path === "/gone") return sendHtml(res, "gone", 404)
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      res.end(`# Page ${request.path}\n\nThe text of page ${request.path} for the command line test.\n`)
    })
    const agentId = await newAgent("CLI ingest")
    const dir = await mkdtemp(join(tmpdir(), "dist-e2e-cli-"))
    try {
      const file = join(dir, "urls.txt")
      await writeFile(file, `# pages\n${site.origin}/a\n\n${site.origin}/gone\n`)
      const ingest = await runCli(service, ["ingest", "--agent", agentId, "--urls", file, "--interval-ms", "200"], { API_KEY: ws.secret })
      expect(ingest.stdout).toContain(`Created 2 sources for ${agentId}`)
      expect(ingest.stdout, ingest.stdout + ingest.stderr).toContain("Done: 1 indexed, 1 failed, 0 processing, 0 pending (of 2)")
      expect(ingest.stdout).toMatch(/failed src_\w+ .*\/gone: not_found/)
      expect(ingest.code).toBe(1)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

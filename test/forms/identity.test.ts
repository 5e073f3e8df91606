/**
 * Signed identity on form submissions, with tokens made by an independent
 * library (jsonwebtoken): the three modes, every way a token can be wrong, the
 * e-mail and name a valid token imposes, plans below Pro acting as `none`, and
 * rotation (at once on this instance, within five minutes on the others).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import jwt from "jsonwebtoken"
import { createHmac, generateKeyPairSync } from "node:crypto"
import { IdentitySecrets, maxTokenLifetimeSeconds } from "../../src/forms/Identity.js"
import { MAX_IDENTITY_TOKEN_LIFETIME_SECONDS, signIdentityToken } from "../../src/sdk/index.js"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { goodFields, setPlan, submit, withForm } from "./support.js"

const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

/** An HS256 token with `claims`, issued now (by the TestClock; jsonwebtoken keeps a given `iat`) and valid for an hour unless overridden. */
const sign = (secret: string, claims: Record<string, unknown>, options: jwt.SignOptions = {}) =>
  Effect.map(nowSeconds, (now) =>
    jwt.sign({ iat: now, exp: now + 3600, ...claims }, secret, { algorithm: "HS256", ...options })
  )

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

const rotate = (h: HarnessShape, key: string) =>
  Effect.map(h.call("POST", "/v1/identity_secret/rotate", { key }), (r) => r.body.data.secret as string)

/** A Pro workspace with a secret and a contact form in `mode`. */
const setup = (mode: "none" | "optional" | "required") =>
  Effect.gen(function* () {
    const h = yield* Harness
    const ws = yield* h.seed({ plan: "pro" })
    const secret = yield* rotate(h, ws.secretTest)
    const { formId } = yield* withForm(h, ws, { identity_mode: mode, rate_limit: { max: 1000, window_seconds: 60 } })
    const send = (token: unknown, fields: Record<string, unknown> = goodFields) =>
      submit(h, formId, ws.formsTest, token === undefined ? { fields } : { fields, identity_token: token })
    const ticketOf = (reply: { body: any }) =>
      Effect.map(
        h.call("GET", `/v1/tickets/${reply.body.data.ticket.public_id}`, { key: ws.secretTest }),
        (r) => r.body.data
      )
    return { h, ws, secret, formId, send, ticketOf }
  })

/** Every kind of bad token, made against `secret`. */
const badTokens = (secret: string) =>
  Effect.gen(function* () {
    const now = yield* nowSeconds
    const valid = yield* sign(secret, { email: "real@example.com" })
    const [header, , signature] = valid.split(".")
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
    const publicPem = publicKey.export({ type: "spki", format: "pem" }).toString()
    const confusedHead = b64({ alg: "HS256", typ: "JWT" })
    const confusedBody = b64({ email: "real@example.com", iat: now, exp: now + 3600 })
    const confused = `${confusedHead}.${confusedBody}.${createHmac("sha256", publicPem).update(`${confusedHead}.${confusedBody}`).digest("base64url")}`
    return {
      "alg none": `${b64({ alg: "none", typ: "JWT" })}.${b64({ email: "real@example.com", iat: now, exp: now + 3600 })}.`,
      HS512: yield* sign(secret, { email: "real@example.com" }, { algorithm: "HS512" }),
      RS256: jwt.sign({ email: "real@example.com", iat: now, exp: now + 3600 }, privateKey, {
        algorithm: "RS256"
      }),
      "HS256 keyed with an RSA public key": confused,
      "wrong secret": yield* sign("idsec_someoneelsessecretsomeoneelsessecret0000", { email: "real@example.com" }),
      "tampered payload": `${header}.${b64({ email: "attacker@example.com", iat: now, exp: now + 3600 })}.${signature}`,
      expired: yield* sign(secret, { email: "real@example.com", iat: now - 7200, exp: now - 3600 }),
      "missing email": yield* sign(secret, { name: "No Mail" }),
      "missing exp": jwt.sign({ email: "real@example.com", iat: now }, secret, { algorithm: "HS256" }),
      "a lifetime over 24 h": yield* sign(secret, { email: "real@example.com", exp: now + 24 * 3600 + 1 }),
      "issued in the future": yield* sign(secret, { email: "real@example.com", iat: now + 3600, exp: now + 7200 }),
      "not a string": 12345,
      garbage: "not.a.jwt"
    } as Record<string, unknown>
  })

layer(testServer({ secretKey: Redacted.make("forms-test-secret-key") }))("form identity", (it) => {
  it.effect("required: a valid token is accepted and its e-mail and name replace the submitted ones", () =>
    Effect.gen(function* () {
      const { secret, send, ticketOf } = yield* setup("required")
      const token = yield* sign(secret, { email: "real@example.com", name: "Real Name", sub: "user-42" })
      const reply = yield* send(token)
      expect(reply.status, reply.text).toBe(201)
      const ticket = yield* ticketOf(reply)
      expect(ticket).toMatchObject({
        visitor_email: "real@example.com",
        visitor_name: "Real Name",
        metadata: { identity: { verified: true, sub: "user-42" } }
      })
      // the token is the whole identity: without a name claim the page's name is not used either (no name at
      // all, rather than a self-declared name beside a verified e-mail), nor kept in the message
      const noName = yield* send(yield* sign(secret, { email: "real@example.com" }))
      expect(noName.status, noName.text).toBe(201)
      const nameless = yield* ticketOf(noName)
      expect(nameless).toMatchObject({ visitor_email: "real@example.com", visitor_name: null, metadata: { identity: { verified: true } } })
      expect(JSON.stringify(nameless.thread)).not.toContain("Ana Pérez")
      const missing = yield* send(undefined)
      expect([missing.status, missing.body.error.code, missing.body.error.param]).toEqual([401, "identity_required", "identity_token"])
    })
  )

  it.effect("a lead target: a valid token without a name claim leaves the lead nameless, whatever the page sent", () =>
    Effect.gen(function* () {
      const { h, ws, secret, formId, send } = yield* setup("required")
      const form = (yield* h.call("GET", `/v1/forms/${formId}`, { key: ws.secretTest })).body.data
      const patched = yield* h.call("PATCH", `/v1/forms/${formId}`, {
        key: ws.secretTest,
        body: { target: { type: "lead", agent_id: form.target.agent_id } }
      })
      expect(patched.status, patched.text).toBe(200)
      const reply = yield* send(yield* sign(secret, { email: "real@example.com" }))
      expect(reply.status, reply.text).toBe(201)
      const lead = (yield* h.call("GET", `/v1/leads/${reply.body.data.lead.id}`, { key: ws.secretTest })).body.data
      expect(lead).toMatchObject({ email: "real@example.com", name: null })
      expect(JSON.stringify(lead)).not.toContain("Ana Pérez")
      const named = yield* send(yield* sign(secret, { email: "real@example.com", name: "Real Name" }))
      const namedLead = (yield* h.call("GET", `/v1/leads/${named.body.data.lead.id}`, { key: ws.secretTest })).body.data
      expect(namedLead).toMatchObject({ email: "real@example.com", name: "Real Name" })
    })
  )

  it.effect("required: every bad token is refused with identity_invalid", () =>
    Effect.gen(function* () {
      const { secret, send } = yield* setup("required")
      for (const [label, token] of Object.entries(yield* badTokens(secret))) {
        const reply = yield* send(token)
        expect(reply.status, label).toBe(401)
        expect(reply.body.error.code, label).toBe("identity_invalid")
      }
    })
  )

  it.effect("a token lives at most 24 hours: a longer lifetime is refused, saying why; an expired one says it expired", () =>
    Effect.gen(function* () {
      const { secret, send } = yield* setup("required")
      const now = yield* nowSeconds
      const day = 24 * 3600
      const refusal = (reply: { status: number; body: any }) => [reply.status, reply.body.error.code, reply.body.error.param]

      // exactly 24 h is accepted, also when most of it is gone
      expect((yield* send(yield* sign(secret, { email: "real@example.com", exp: now + day }))).status).toBe(201)
      expect((yield* send(yield* sign(secret, { email: "real@example.com", iat: now - day + 60, exp: now + 60 }))).status).toBe(201)

      // a second more, or a token issued 23 h ago that runs 2 h more, is refused
      for (const claims of [{ exp: now + day + 1 }, { iat: now - 23 * 3600, exp: now + 2 * 3600 }, { exp: now + 365 * day }]) {
        const reply = yield* send(yield* sign(secret, { email: "real@example.com", ...claims }))
        expect(refusal(reply), JSON.stringify(claims)).toEqual([401, "identity_invalid", "identity_token"])
        expect(reply.body.error.message).toContain("at most 86400 seconds (24 hours) after `iat`")
      }

      // `iat` ahead of our clock: a minute of skew passes, an hour is refused
      expect((yield* send(yield* sign(secret, { email: "real@example.com", iat: now + 30, exp: now + 3600 }))).status).toBe(201)
      const ahead = yield* send(yield* sign(secret, { email: "real@example.com", iat: now + 3600, exp: now + 7200 }))
      expect(refusal(ahead)).toEqual([401, "identity_invalid", "identity_token"])
      expect(ahead.body.error.message).toContain("in the future")

      const expired = yield* send(yield* sign(secret, { email: "real@example.com", iat: now - 7200, exp: now - 3600 }))
      expect(refusal(expired)).toEqual([401, "identity_invalid", "identity_token"])
      expect(expired.body.error.message).toContain("has expired")
      // an expired token under another secret tells nothing more than a bad signature
      const foreign = yield* send(yield* sign("idsec_someoneelsessecretsomeoneelsessecret0000", { email: "real@example.com", iat: now - 7200, exp: now - 3600 }))
      expect(foreign.body.error.message).not.toContain("expired (")
      expect(foreign.body.error.message).toContain("not signed with this workspace's identity secret")

      // a token that passed stops passing when the Clock moves past its `exp`
      const hour = yield* sign(secret, { email: "real@example.com" })
      expect((yield* send(hour)).status).toBe(201)
      yield* TestClock.adjust("61 minutes")
      expect((yield* send(hour)).body.error.message).toContain("has expired")
    })
  )

  it.effect("the SDK mints tokens within the limit: 24 h is accepted, a longer lifetime it refuses to sign", () =>
    Effect.gen(function* () {
      const { secret, send } = yield* setup("required")
      const now = yield* nowSeconds
      expect(MAX_IDENTITY_TOKEN_LIFETIME_SECONDS).toBe(maxTokenLifetimeSeconds)
      const longest = yield* Effect.promise(() =>
        signIdentityToken(secret, { email: "sdk@example.com" }, { now, expiresInSeconds: MAX_IDENTITY_TOKEN_LIFETIME_SECONDS })
      )
      expect((yield* send(longest)).status).toBe(201)
      const refused = yield* Effect.flip(
        Effect.tryPromise(() => signIdentityToken(secret, { email: "sdk@example.com" }, { now, expiresInSeconds: MAX_IDENTITY_TOKEN_LIFETIME_SECONDS + 1 }))
      )
      expect(String(refused.cause)).toContain("at most 86400")
    })
  )

  it.effect("optional: bad or missing tokens are ignored, a valid one is applied", () =>
    Effect.gen(function* () {
      const { secret, send, ticketOf } = yield* setup("optional")
      for (const [label, token] of Object.entries(yield* badTokens(secret))) {
        const reply = yield* send(token)
        expect(reply.status, `${label}: ${reply.text}`).toBe(201)
        const ticket = yield* ticketOf(reply)
        expect(ticket.visitor_email, label).toBe("ana@example.com")
        expect(ticket.metadata.identity, label).toEqual({ verified: false })
      }
      expect((yield* send(undefined)).status).toBe(201)
      const good = yield* send(yield* sign(secret, { email: "real@example.com" }))
      expect((yield* ticketOf(good)).metadata.identity).toEqual({ verified: true })
    })
  )

  it.effect("none, and plans below Pro: tokens are not looked at", () =>
    Effect.gen(function* () {
      const none = yield* setup("none")
      const ignored = yield* none.send("garbage")
      expect(ignored.status).toBe(201)
      const valid = yield* none.send(yield* sign(none.secret, { email: "real@example.com" }))
      expect((yield* none.ticketOf(valid)).visitor_email).toBe("ana@example.com")

      const required = yield* setup("required")
      yield* setPlan(required.ws.workspace.id, "starter")
      const anonymous = yield* required.send(undefined)
      expect(anonymous.status, anonymous.text).toBe(201)
      const unverified = yield* required.send(yield* sign(required.secret, { email: "real@example.com" }))
      expect((yield* required.ticketOf(unverified)).visitor_email).toBe("ana@example.com")
    })
  )

  it.effect("the SDK's signIdentityToken makes tokens the service accepts, and jsonwebtoken verifies", () =>
    Effect.gen(function* () {
      const { secret, send, ticketOf } = yield* setup("required")
      const now = yield* nowSeconds
      const token = yield* Effect.promise(() =>
        signIdentityToken(secret, { email: "sdk@example.com", name: "Sdk User", sub: "u1" }, { now })
      )
      const decoded = jwt.verify(token, secret, { algorithms: ["HS256"], clockTimestamp: now }) as jwt.JwtPayload
      expect(decoded).toMatchObject({ email: "sdk@example.com", name: "Sdk User", sub: "u1", iat: now, exp: now + 600 })
      const reply = yield* send(token)
      expect(reply.status, reply.text).toBe(201)
      expect(yield* ticketOf(reply)).toMatchObject({ visitor_email: "sdk@example.com", visitor_name: "Sdk User" })
      const stale = yield* Effect.promise(() =>
        signIdentityToken(secret, { email: "sdk@example.com" }, { now: now - 700 })
      )
      expect((yield* send(stale)).status).toBe(401)
    })
  )

  it.effect("a workspace that never generated a secret refuses every token in required mode", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws: SeededWorkspace = yield* h.seed({ plan: "enterprise" })
      const { formId } = yield* withForm(h, ws, { identity_mode: "required" })
      const token = yield* sign("idsec_anything", { email: "real@example.com" })
      const reply = yield* submit(h, formId, ws.formsTest, { fields: goodFields, identity_token: token })
      expect([reply.status, reply.body.error.code]).toEqual([401, "identity_invalid"])
    })
  )

  describe("rotation", () => {
    it.effect("through this instance: old tokens fail at once", () =>
      Effect.gen(function* () {
        const { h, ws, secret, send } = yield* setup("required")
        const old = yield* sign(secret, { email: "real@example.com" })
        expect((yield* send(old)).status).toBe(201)
        const next = yield* rotate(h, ws.secretTest)
        expect((yield* send(old)).status).toBe(401)
        expect((yield* send(yield* sign(next, { email: "real@example.com" }))).status).toBe(201)
      })
    )

    it.effect("by another instance: old tokens fail within five minutes", () =>
      Effect.gen(function* () {
        const { ws, secret, send } = yield* setup("required")
        const old = yield* sign(secret, { email: "real@example.com" })
        expect((yield* send(old)).status).toBe(201)
        // another process on the same database: its own IdentitySecrets, its own cache
        const other = yield* Effect.provide(IdentitySecrets, IdentitySecrets.Default)
        const rotated = yield* other.rotate({ workspaceId: ws.workspace.id, environment: "test" })
        const fresh = yield* sign(rotated.secret, { email: "real@example.com" })
        // this instance still trusts its copy for a while
        expect((yield* send(old)).status).toBe(201)
        yield* TestClock.adjust("4 minutes")
        expect((yield* send(old)).status).toBe(201)
        yield* TestClock.adjust("1 minute")
        expect((yield* send(old)).status).toBe(401)
        expect((yield* send(fresh)).status).toBe(201)
      })
    )
  })
})

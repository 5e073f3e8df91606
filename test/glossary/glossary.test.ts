import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AgentId } from "../../schema/Ids.js"
import { GlossaryRepo } from "../../src/glossary/GlossaryRepo.js"
import { Harness, type HarnessShape, type SeededWorkspace, testEpoch, testServer } from "../support/harness.js"
import { runSecurityMatrix, type SecuredEndpoint } from "../support/security.js"

const createAgent = (h: HarnessShape, key: string) =>
  Effect.map(
    h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Glossary bot" } }),
    (r) => AgentId.make(r.body.data.id)
  )

const term = (value: string) => encodeURIComponent(value)

/** A path under a fresh agent of `environment`, with the term "Router" in its glossary. */
const underAgent = (environment: "test" | "live", suffix: string) => (ws: SeededWorkspace, h: HarnessShape) =>
  Effect.gen(function* () {
    const key = environment === "test" ? ws.secretTest : ws.secretLive
    const agent = yield* createAgent(h, key)
    yield* h.call("POST", `/v1/agents/${agent}/glossary/terms`, { key, body: { term: "Router" } })
    return `/v1/agents/${agent}${suffix}`
  })

export const glossaryEndpoints: ReadonlyArray<SecuredEndpoint> = [
  { name: "retrieve", method: "GET", suffix: "/glossary", scope: "read:knowledge" },
  { name: "replace", method: "PUT", suffix: "/glossary", body: { terms: [{ term: "Modem" }] }, scope: "write:knowledge" },
  { name: "addTerm", method: "POST", suffix: "/glossary/terms", body: { term: "Switch" }, scope: "write:knowledge" },
  {
    name: "updateTerm",
    method: "PATCH",
    suffix: "/glossary/terms/Router",
    body: { enabled: false },
    scope: "write:knowledge"
  },
  { name: "deleteTerm", method: "DELETE", suffix: "/glossary/terms/Router", scope: "write:knowledge" }
].map(({ suffix, ...e }) => ({
  ...e,
  scope: e.scope as SecuredEndpoint["scope"],
  path: underAgent("test", suffix),
  liveObjectPath: underAgent("live", suffix)
}))

layer(testServer())("glossary", (it) => {
  describe("security matrix", () => {
    for (const endpoint of glossaryEndpoints) {
      it.effect(`${endpoint.method} ${endpoint.name}`, () => Effect.flatMap(Harness, (h) => runSecurityMatrix(h, endpoint)))
    }
  })

  it.effect("adds terms with defaults, lists them alphabetically, refuses a term it holds in any case", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const empty = yield* h.call("GET", `/v1/agents/${agent}/glossary`, { key: ws.secretTest })
      expect(empty.status).toBe(200)
      expect(empty.body.data).toEqual({ object: "glossary", agent_id: agent, terms: [] })

      const added = yield* h.call("POST", `/v1/agents/${agent}/glossary/terms`, {
        key: ws.secretTest,
        body: { term: "  Wi-Fi  ", definition: "Wireless network", synonyms: ["wifi", "wireless"] }
      })
      expect(added.status).toBe(201)
      expect(added.body.data).toEqual({
        object: "glossary_term",
        term: "Wi-Fi",
        definition: "Wireless network",
        synonyms: ["wifi", "wireless"],
        case_sensitive: false,
        enabled: true,
        created_at: new Date(testEpoch).toISOString(),
        updated_at: new Date(testEpoch).toISOString()
      })
      yield* h.call("POST", `/v1/agents/${agent}/glossary/terms`, {
        key: ws.secretTest,
        body: { term: "APN", case_sensitive: true, enabled: false }
      })

      const again = yield* h.call("POST", `/v1/agents/${agent}/glossary/terms`, {
        key: ws.secretTest,
        body: { term: "WI-FI" }
      })
      expect(again.status).toBe(409)
      expect(again.body.error).toMatchObject({ code: "term_exists", param: "term", type: "invalid_request" })
      expect(again.body.error.message).toContain("'Wi-Fi'")

      const listed = yield* h.call("GET", `/v1/agents/${agent}/glossary`, { key: ws.secretTest })
      expect(listed.body.data.terms.map((t: any) => [t.term, t.definition, t.case_sensitive, t.enabled])).toEqual([
        ["APN", null, true, false],
        ["Wi-Fi", "Wireless network", false, true]
      ])
    })
  )

  it.effect("validates term bodies and names the offending parameter", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const post = (body: unknown) => h.call("POST", `/v1/agents/${agent}/glossary/terms`, { key: ws.secretTest, body })
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [{}, "parameter_missing", "term"],
        [{ term: "   " }, "parameter_invalid", "term"],
        [{ term: "x".repeat(101) }, "parameter_invalid", "term"],
        [{ term: "ok", synonyms: "wifi" }, "parameter_invalid", "synonyms"],
        [{ term: "ok", synonyms: Array.from({ length: 51 }, (_, i) => `s${i}`) }, "parameter_invalid", "synonyms"],
        [{ term: "ok", synonyms: ["fine", ""] }, "parameter_invalid", "synonyms[1]"],
        [{ term: "ok", enabled: "yes" }, "parameter_invalid", "enabled"],
        [{ term: "ok", definiton: "typo" }, "parameter_invalid", "definiton"]
      ]
      for (const [body, code, param] of cases) {
        const reply = yield* post(body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error, JSON.stringify(body)).toMatchObject({ code, param })
      }
      const listed = yield* h.call("GET", `/v1/agents/${agent}/glossary`, { key: ws.secretTest })
      expect(listed.body.data.terms).toEqual([])
    })
  )

  it.effect("updates and deletes a term named in the path, percent-encoded and in any case", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const name = "Router / Módem 5G?"
      yield* h.call("POST", `/v1/agents/${agent}/glossary/terms`, { key: ws.secretTest, body: { term: name } })
      const path = `/v1/agents/${agent}/glossary/terms/${term(name.toUpperCase())}`

      const patched = yield* h.call("PATCH", path, {
        key: ws.secretTest,
        body: { case_sensitive: true, enabled: false, definition: "The box", synonyms: ["gateway"] }
      })
      expect(patched.status).toBe(200)
      expect(patched.body.data).toMatchObject({
        term: name,
        definition: "The box",
        synonyms: ["gateway"],
        case_sensitive: true,
        enabled: false
      })
      const cleared = yield* h.call("PATCH", path, { key: ws.secretTest, body: { definition: null } })
      expect(cleared.body.data).toMatchObject({ definition: null, synonyms: ["gateway"], enabled: false })

      const rename = yield* h.call("PATCH", path, { key: ws.secretTest, body: { term: "Other" } })
      expect(rename.status).toBe(400)
      expect(rename.body.error).toMatchObject({ code: "parameter_invalid", param: "term" })

      const unknown = yield* h.call("PATCH", `/v1/agents/${agent}/glossary/terms/nope`, {
        key: ws.secretTest,
        body: { enabled: true }
      })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatchObject({ code: "resource_missing", param: "term" })

      const deleted = yield* h.call("DELETE", path, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      expect(deleted.body.data).toEqual({ object: "glossary_term", term: name, deleted: true })
      const twice = yield* h.call("DELETE", path, { key: ws.secretTest })
      expect(twice.status).toBe(404)
      expect(twice.body.error.code).toBe("resource_missing")
    })
  )

  it.effect("PUT replaces the whole list, and a refused list leaves the old one whole", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const put = (terms: ReadonlyArray<unknown>) =>
        h.call("PUT", `/v1/agents/${agent}/glossary`, { key: ws.secretTest, body: { terms } })
      const names = (reply: { body: any }) => reply.body.data.terms.map((t: any) => t.term)

      const first = yield* put([{ term: "Alpha" }, { term: "Beta", synonyms: ["b"] }])
      expect(first.status).toBe(200)
      expect(names(first)).toEqual(["Alpha", "Beta"])

      const second = yield* put([{ term: "Gamma", definition: "third" }, { term: "alpha" }])
      expect(names(second)).toEqual(["alpha", "Gamma"])

      const duplicate = yield* put([{ term: "Delta" }, { term: "Eps" }, { term: "DELTA" }])
      expect(duplicate.status).toBe(400)
      expect(duplicate.body.error).toMatchObject({ code: "parameter_invalid", param: "terms[2].term" })
      const invalid = yield* put([{ term: "Delta" }, { term: "Eps", enabled: 1 }])
      expect(invalid.status).toBe(400)
      expect(invalid.body.error).toMatchObject({ code: "parameter_invalid", param: "terms[1].enabled" })
      const tooMany = yield* put(Array.from({ length: 1001 }, (_, i) => ({ term: `t${i}` })))
      expect(tooMany.status).toBe(400)
      expect(tooMany.body.error).toMatchObject({ code: "parameter_invalid", param: "terms" })

      const after = yield* h.call("GET", `/v1/agents/${agent}/glossary`, { key: ws.secretTest })
      expect(names(after)).toEqual(["alpha", "Gamma"])

      const emptied = yield* put([])
      expect(emptied.body.data.terms).toEqual([])
    })
  )

  it.effect("concurrent replacements never mix: the result is exactly one of the lists", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const lists = Array.from({ length: 6 }, (_, n) =>
        Array.from({ length: 20 }, (_, i) => ({ term: `list${n}-term${String(i).padStart(2, "0")}` }))
      )
      const replies = yield* Effect.all(
        lists.map((terms) => h.call("PUT", `/v1/agents/${agent}/glossary`, { key: ws.secretTest, body: { terms } })),
        { concurrency: "unbounded" }
      )
      expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200))
      const final = yield* h.call("GET", `/v1/agents/${agent}/glossary`, { key: ws.secretTest })
      const got = final.body.data.terms.map((t: any) => t.term)
      expect(lists.map((l) => l.map((t) => t.term))).toContainEqual(got)
    })
  )

  it.effect("another environment's or workspace's agent, and another agent's term, are 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const live = yield* createAgent(h, ws.secretLive)
      yield* h.call("POST", `/v1/agents/${live}/glossary/terms`, { key: ws.secretLive, body: { term: "Live" } })
      const crossed = yield* h.call("GET", `/v1/agents/${live}/glossary`, { key: ws.secretTest })
      expect(crossed.status).toBe(404)
      expect(crossed.body.error).toMatchObject({ code: "resource_missing", param: "id" })

      const other = yield* h.seed()
      const foreign = yield* h.call("POST", `/v1/agents/${live}/glossary/terms`, {
        key: other.secretLive,
        body: { term: "Mine" }
      })
      expect(foreign.status).toBe(404)

      const mine = yield* createAgent(h, ws.secretLive)
      const elsewhere = yield* h.call("DELETE", `/v1/agents/${mine}/glossary/terms/Live`, { key: ws.secretLive })
      expect(elsewhere.status).toBe(404)
      expect(elsewhere.body.error).toMatchObject({ code: "resource_missing", param: "term" })
      const kept = yield* h.call("GET", `/v1/agents/${live}/glossary`, { key: ws.secretLive })
      expect(kept.body.data.terms.map((t: any) => t.term)).toEqual(["Live"])

      const malformed = yield* h.call("GET", `/v1/agents/nope/glossary`, { key: ws.secretTest })
      expect(malformed.status).toBe(400)
      expect(malformed.body.error).toMatchObject({ code: "parameter_invalid", param: "id" })
    })
  )

  it.effect("enabledTerms gives query expansion the enabled terms with their synonyms", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      yield* h.call("PUT", `/v1/agents/${agent}/glossary`, {
        key: ws.secretTest,
        body: {
          terms: [
            { term: "Wi-Fi", synonyms: ["wifi", "wireless"], definition: "Wireless network" },
            { term: "APN", case_sensitive: true },
            { term: "Legacy", enabled: false }
          ]
        }
      })
      const repo = yield* GlossaryRepo
      const terms = yield* repo.enabledTerms(
        { workspaceId: ws.workspace.id, environment: "test" },
        agent
      )
      expect(terms).toEqual([
        { term: "APN", definition: null, synonyms: [], case_sensitive: true },
        { term: "Wi-Fi", definition: "Wireless network", synonyms: ["wifi", "wireless"], case_sensitive: false }
      ])
    }).pipe(Effect.provide(GlossaryRepo.Default))
  )
})

/**
 * Glossaries through the typed client (so requests are checked against the
 * contract); raw calls only where the test is about what the edge does with a
 * body or path the client could not send (untrimmed, invalid, malformed).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { CreateTerm } from "../../schema/Glossary.js"
import { ParameterInvalid, ResourceMissing, TermExists } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import { GlossaryRepo } from "../../src/glossary/GlossaryRepo.js"
import type { Client } from "../../src/sdk/index.js"
import { expectFailure } from "../support/expect.js"
import { Harness, testEpoch, testServer } from "../support/harness.js"

const createAgent = (api: Client) =>
  Effect.map(api.agents.create({ payload: { type: "support", name: "Glossary bot" } }), (r) => r.data.id)

/** The typed client does not encode path parameters: a term is sent percent-encoded. */
const term = (value: string) => encodeURIComponent(value)

const glossaryOf = (api: Client, id: AgentId) => Effect.map(api.glossary.retrieve({ path: { id } }), (r) => r.data)

const replace = (api: Client, id: AgentId, terms: ReadonlyArray<CreateTerm>) =>
  api.glossary.replace({ path: { id }, payload: { terms } })

const names = (glossary: { readonly terms: ReadonlyArray<{ readonly term: string }> }) => glossary.terms.map((t) => t.term)

layer(testServer())("glossary", (it) => {
  it.effect("adds terms with defaults, lists them alphabetically, refuses a term it holds in any case", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      expect(yield* glossaryOf(api, agent)).toEqual({ object: "glossary", agent_id: agent, terms: [] })

      // raw: the client would refuse to send an untrimmed term
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
      yield* api.glossary.addTerm({ path: { id: agent }, payload: { term: "APN", case_sensitive: true, enabled: false } })

      const again = yield* expectFailure(api.glossary.addTerm({ path: { id: agent }, payload: { term: "WI-FI" } }), TermExists)
      expect(again.param).toBe("term")
      expect(again.message).toContain("'Wi-Fi'")

      const listed = yield* glossaryOf(api, agent)
      expect(listed.terms.map((t) => [t.term, t.definition, t.case_sensitive, t.enabled])).toEqual([
        ["APN", null, true, false],
        ["Wi-Fi", "Wireless network", false, true]
      ])
    })
  )

  it.effect("validates term bodies and names the offending parameter", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      // raw: these bodies break the contract on purpose
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
      expect((yield* glossaryOf(api, agent)).terms).toEqual([])
    })
  )

  it.effect("updates and deletes a term named in the path, percent-encoded and in any case", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      const name = "Router / Módem 5G?"
      yield* api.glossary.addTerm({ path: { id: agent }, payload: { term: name } })
      const path = { id: agent, term: term(name.toUpperCase()) }

      const patched = yield* api.glossary.updateTerm({
        path,
        payload: { case_sensitive: true, enabled: false, definition: "The box", synonyms: ["gateway"] }
      })
      expect(patched.data).toMatchObject({
        term: name,
        definition: "The box",
        synonyms: ["gateway"],
        case_sensitive: true,
        enabled: false
      })
      const cleared = yield* api.glossary.updateTerm({ path, payload: { definition: null } })
      expect(cleared.data).toMatchObject({ definition: null, synonyms: ["gateway"], enabled: false })

      // raw: `term` is not a field of an update
      const rename = yield* h.call("PATCH", `/v1/agents/${agent}/glossary/terms/${path.term}`, {
        key: ws.secretTest,
        body: { term: "Other" }
      })
      expect(rename.status).toBe(400)
      expect(rename.body.error).toMatchObject({ code: "parameter_invalid", param: "term" })

      const unknown = yield* expectFailure(
        api.glossary.updateTerm({ path: { id: agent, term: "nope" }, payload: { enabled: true } }),
        ResourceMissing
      )
      expect(unknown.param).toBe("term")

      const deleted = yield* api.glossary.deleteTerm({ path })
      expect(deleted.data).toEqual({ object: "glossary_term", term: name, deleted: true })
      yield* expectFailure(api.glossary.deleteTerm({ path }), ResourceMissing)
    })
  )

  it.effect("PUT replaces the whole list, and a refused list leaves the old one whole", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)

      const first = yield* replace(api, agent, [{ term: "Alpha" }, { term: "Beta", synonyms: ["b"] }])
      expect(names(first.data)).toEqual(["Alpha", "Beta"])

      const second = yield* replace(api, agent, [{ term: "Gamma", definition: "third" }, { term: "alpha" }])
      expect(names(second.data)).toEqual(["alpha", "Gamma"])

      const duplicate = yield* expectFailure(
        replace(api, agent, [{ term: "Delta" }, { term: "Eps" }, { term: "DELTA" }]),
        ParameterInvalid
      )
      expect(duplicate.param).toBe("terms[2].term")
      // raw: bodies the client would refuse to send
      const put = (terms: ReadonlyArray<unknown>) =>
        h.call("PUT", `/v1/agents/${agent}/glossary`, { key: ws.secretTest, body: { terms } })
      const invalid = yield* put([{ term: "Delta" }, { term: "Eps", enabled: 1 }])
      expect(invalid.status).toBe(400)
      expect(invalid.body.error).toMatchObject({ code: "parameter_invalid", param: "terms[1].enabled" })
      const tooMany = yield* put(Array.from({ length: 1001 }, (_, i) => ({ term: `t${i}` })))
      expect(tooMany.status).toBe(400)
      expect(tooMany.body.error).toMatchObject({ code: "parameter_invalid", param: "terms" })

      expect(names(yield* glossaryOf(api, agent))).toEqual(["alpha", "Gamma"])

      const emptied = yield* replace(api, agent, [])
      expect(emptied.data.terms).toEqual([])
    })
  )

  it.effect("concurrent replacements never mix: the result is exactly one of the lists", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      const lists = Array.from({ length: 6 }, (_, n) =>
        Array.from({ length: 20 }, (_, i) => ({ term: `list${n}-term${String(i).padStart(2, "0")}` }))
      )
      yield* Effect.all(
        lists.map((terms) => replace(api, agent, terms)),
        { concurrency: "unbounded" }
      )
      const got = names(yield* glossaryOf(api, agent))
      expect(lists.map((l) => l.map((t) => t.term))).toContainEqual(got)
    })
  )

  it.effect("another environment's or workspace's agent, and another agent's term, are 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sandbox = yield* h.client(ws.secretTest)
      const liveApi = yield* h.client(ws.secretLive)
      const live = yield* createAgent(liveApi)
      yield* liveApi.glossary.addTerm({ path: { id: live }, payload: { term: "Live" } })
      const crossed = yield* expectFailure(glossaryOf(sandbox, live), ResourceMissing)
      expect(crossed.param).toBe("id")

      const other = yield* h.seed()
      const foreign = yield* h.client(other.secretLive)
      yield* expectFailure(foreign.glossary.addTerm({ path: { id: live }, payload: { term: "Mine" } }), ResourceMissing)

      const mine = yield* createAgent(liveApi)
      const elsewhere = yield* expectFailure(
        liveApi.glossary.deleteTerm({ path: { id: mine, term: "Live" } }),
        ResourceMissing
      )
      expect(elsewhere.param).toBe("term")
      expect(names(yield* glossaryOf(liveApi, live))).toEqual(["Live"])

      // raw: the client cannot send an id that is not an agent id
      const malformed = yield* h.call("GET", `/v1/agents/nope/glossary`, { key: ws.secretTest })
      expect(malformed.status).toBe(400)
      expect(malformed.body.error).toMatchObject({ code: "parameter_invalid", param: "id" })
    })
  )

  it.effect("enabledTerms gives query expansion the enabled terms with their synonyms", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent = yield* createAgent(api)
      yield* replace(api, agent, [
        { term: "Wi-Fi", synonyms: ["wifi", "wireless"], definition: "Wireless network" },
        { term: "APN", case_sensitive: true },
        { term: "Legacy", enabled: false }
      ])
      const repo = yield* GlossaryRepo
      const terms = yield* repo.enabledTerms({ workspaceId: ws.workspace.id, environment: "test" }, agent)
      expect(terms).toEqual([
        { term: "APN", definition: null, synonyms: [], case_sensitive: true },
        { term: "Wi-Fi", definition: "Wireless network", synonyms: ["wifi", "wireless"], case_sensitive: false }
      ])
    }).pipe(Effect.provide(GlossaryRepo.Default))
  )
})

/** What the request path reads of the contract: the facts of the endpoint the router matched, the probes, the methods of a path. */
import { describe, expect, it } from "@effect/vitest"
import { MAX_FILE_BYTES } from "../../schema/Files.js"
import { endpointAt, formIdOf, isOperational, methodsFor, templateOf } from "../../src/http/Endpoints.js"

describe("the contract's endpoints", () => {
  it("knows the upload endpoint by its annotation, on PUT only", () => {
    const put = endpointAt({ method: "PUT", path: "/v1/files/:id/content" })
    expect(put?.upload?.maxBytes).toBe(MAX_FILE_BYTES)
    expect(put?.upload?.mediaType.test("image/png")).toBe(true)
    expect(put?.upload?.mediaType.test("application/json")).toBe(false)
    expect(endpointAt({ method: "POST", path: "/v1/files/:id/content" })).toBeUndefined()
    expect(endpointAt({ method: "POST", path: "/v1/files" })?.upload).toBeUndefined()
  })

  it("knows a POST without payload as bodiless", () => {
    expect(endpointAt({ method: "POST", path: "/v1/files/:id/confirm" })?.bodiless).toBe(true)
    expect(endpointAt({ method: "POST", path: "/v1/files" })?.bodiless).toBe(false)
  })

  it("names the path parameter of a public form endpoint, and only there", () => {
    expect(endpointAt({ method: "GET", path: "/v1/forms/:form_id/config" })?.formParam).toBe("form_id")
    expect(endpointAt({ method: "POST", path: "/api/forms/:form_id/submit" })?.formParam).toBe("form_id")
    expect(endpointAt({ method: "GET", path: "/v1/forms/:id" })?.formParam).toBeUndefined()
  })

  it("names the form of a public form path, whatever the method (a 405 there answers the form's CORS too)", () => {
    expect(formIdOf("/v1/forms/form_1/config")).toBe("form_1")
    expect(formIdOf("/api/forms/form_2/submit")).toBe("form_2")
    expect(formIdOf("/api/forms/form_2/submit/")).toBe("form_2")
    expect(formIdOf("/v1/forms/form_1")).toBeUndefined()
    expect(formIdOf("/v1/forms/form_1/config/x")).toBeUndefined()
  })

  it("knows the probes and the routes beside the API as operational, whatever the method", () => {
    for (const path of [
      "/healthz",
      "/readyz",
      "/healthz/",
      "/metrics",
      "/docs",
      "/docs/errors",
      "/admin/rpc",
      "/storage/v1/object/public/widget/v1/service-form-element.esm.js",
      "/demo/forms/form_1",
      "/storage/v1/object/public/widget/v1/service-chat-element.esm.js",
      "/demo/chat"
    ]) {
      expect(isOperational(path), path).toBe(true)
    }
    expect(isOperational("/v1/openapi.json")).toBe(false)
    expect(isOperational("/v1/agents")).toBe(false)
  })

  it("names a route by its template", () => {
    expect(templateOf("/v1/agents/:id")).toBe("/v1/agents/{id}")
    expect(templateOf("/v1/agents/:agent_id/glossary/terms/:id")).toBe("/v1/agents/{agent_id}/glossary/terms/{id}")
  })

  it("lists the methods that serve a path, for 405's Allow", () => {
    expect([...methodsFor("/v1/agents/agt_12345678")].sort()).toEqual(["DELETE", "GET", "PATCH"])
    expect(methodsFor("/v1/forms/form_1/config")).toEqual(["GET"])
    expect(methodsFor("/nowhere")).toEqual([])
  })
})

/** What the edge reads of a request from the route table: the contract's endpoint facts, found by the request's route. */
import { describe, expect, it } from "@effect/vitest"
import { MAX_FILE_BYTES } from "../../schema/Files.js"
import { routeTable } from "../../src/http/Routes.js"

describe("route table", () => {
  it("finds the upload endpoint by its annotation, on PUT only", () => {
    const put = routeTable.match("PUT", "/v1/files/file_abc/content")
    expect(put.endpoint?.upload?.maxBytes).toBe(MAX_FILE_BYTES)
    expect(put.endpoint?.upload?.mediaType.test("image/png")).toBe(true)
    expect(put.endpoint?.upload?.mediaType.test("application/json")).toBe(false)
    expect(put.template).toBe("/v1/files/{id}/content")
    expect(routeTable.match("POST", "/v1/files/file_abc/content").endpoint).toBeUndefined()
    expect(routeTable.match("POST", "/v1/files").endpoint?.upload).toBeUndefined()
  })

  it("knows a POST without payload as bodiless", () => {
    expect(routeTable.match("POST", "/v1/files/file_abc/confirm").endpoint?.bodiless).toBe(true)
    expect(routeTable.match("POST", "/v1/files").endpoint?.bodiless).toBe(false)
  })

  it("names the form of a public form path, whatever the method; the form key belongs to its endpoints", () => {
    expect(routeTable.match("GET", "/v1/forms/form_1/config").formId).toBe("form_1")
    expect(routeTable.match("POST", "/api/forms/form_2/submit").formId).toBe("form_2")
    expect(routeTable.match("POST", "/api/forms/form_2/submit/").formId).toBe("form_2")
    // a 405 there still answers the form's CORS
    expect(routeTable.match("DELETE", "/v1/forms/form_1/config").formId).toBe("form_1")
    expect(routeTable.match("DELETE", "/v1/forms/form_1/config").endpoint).toBeUndefined()
    expect(routeTable.match("POST", "/api/forms/form_2/submit").endpoint?.formParam).toBe("form_id")
    expect(routeTable.match("GET", "/v1/forms/form_1").formId).toBeUndefined()
  })

  it("knows the probes and the routes beside the API as operational", () => {
    for (const [method, path] of [
      ["GET", "/healthz"],
      ["HEAD", "/readyz"],
      ["POST", "/healthz"],
      ["GET", "/metrics"],
      ["GET", "/docs"],
      ["GET", "/docs/errors"],
      ["POST", "/admin/rpc"],
      ["GET", "/storage/v1/object/public/widget/v1/service-form-element.esm.js"],
      ["GET", "/demo/forms/form_1"]
    ] as const) {
      expect(routeTable.match(method, path).operational, `${method} ${path}`).toBe(true)
    }
    expect(routeTable.match("GET", "/v1/openapi.json").operational).toBe(false)
    expect(routeTable.match("GET", "/v1/agents").operational).toBe(false)
  })

  it("names a request by its route's template, never its path", () => {
    expect(routeTable.match("HEAD", "/v1/agents/agt_12345678").template).toBe("/v1/agents/{id}")
    expect(routeTable.match("GET", "/healthz").template).toBe("/healthz")
    expect(routeTable.match("GET", "/docs/anything").template).toBe("/docs/*")
    expect(routeTable.match("GET", "/demo/forms/form_1").template).toBe("/demo/forms/{form_id}")
    expect(routeTable.match("PATCH", "/healthz").template).toBe("unmatched")
    expect(routeTable.match("GET", "/nowhere").template).toBe("unmatched")
  })
})

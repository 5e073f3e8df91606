/**
 * fast-check arbitraries read from the OpenAPI document: for every operation a
 * request that is valid by the document, then broken in one place (a body
 * field, a path id, a query value or a header). New endpoints are covered as
 * soon as they are in the document. Some bodies carry a string the input
 * policy refuses before anything else reads the body (NUL, a lone UTF-16
 * surrogate, in a value or a field name, nested too): with a valid key and a
 * JSON media type those requests name the answer they must get (`expected`).
 */
import fc from "fast-check"

type Json = any

export interface Operation {
  readonly method: string
  readonly path: string
  readonly operationId: string
  readonly pathParams: ReadonlyArray<string>
  readonly query: ReadonlyArray<{ readonly name: string; readonly schema: Json }>
  readonly body: Json | undefined
}

export interface FuzzRequest {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
  /** What was broken, for the failure report. */
  readonly broken: string
  /** The answer this request must get, when it is certain (a body the input policy refuses). */
  readonly expected?: { readonly status: number; readonly code: string }
}

export const operationsOf = (spec: Json): ReadonlyArray<Operation> =>
  Object.entries<Json>(spec.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      operationId: op.operationId,
      pathParams: (op.parameters ?? []).filter((p: Json) => p.in === "path").map((p: Json) => p.name),
      query: (op.parameters ?? []).filter((p: Json) => p.in === "query").map((p: Json) => ({ name: p.name, schema: p.schema })),
      body: op.requestBody?.content?.["application/json"]?.schema
    }))
  )

const resolve = (spec: Json, schema: Json): Json => {
  let current = schema
  for (let i = 0; i < 20 && current?.$ref !== undefined; i++) {
    current = current.$ref.split("/").slice(1).reduce((node: Json, key: string) => node?.[key], spec)
  }
  return current ?? {}
}

const text = (min: number, max: number) => fc.string({ minLength: min, maxLength: Math.min(max, 40) })

/** A value valid by `schema` as far as JSON Schema can say (ids that exist are the server's business). */
export const valid = (spec: Json, schema: Json, depth = 0): fc.Arbitrary<Json> => {
  const s = resolve(spec, schema)
  if (depth > 6) return fc.constant(null)
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum !== undefined) return fc.constantFrom(...s.enum)
  const alternatives = s.anyOf ?? s.oneOf
  if (alternatives !== undefined) return fc.oneof(...alternatives.map((a: Json) => valid(spec, a, depth + 1)))
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case "string":
      if (s.format === "date-time") return fc.constant("2026-11-02T10:00:00.000Z")
      if (s.format === "email") return fc.constant("visitor@example.com")
      if (s.format === "uri") return fc.constant("https://example.com/hook")
      return text(s.minLength ?? 0, s.maxLength ?? 40).map((v) => (v.length < (s.minLength ?? 0) ? v.padEnd(s.minLength, "x") : v))
    case "integer":
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 })
    case "number":
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(valid(spec, s.items ?? {}, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) })
    case "object": {
      const properties = Object.entries<Json>(s.properties ?? {})
      if (properties.length === 0) return fc.dictionary(text(1, 10), fc.oneof(fc.string(), fc.integer()), { maxKeys: 3 })
      const required = new Set<string>(s.required ?? [])
      return fc.record(
        Object.fromEntries(properties.map(([k, v]) => [k, valid(spec, v, depth + 1)])),
        { requiredKeys: properties.map(([k]) => k).filter((k) => required.has(k)) }
      )
    }
  }
  return fc.oneof(fc.string(), fc.integer(), fc.constant(null))
}

/** A placeholder replaced in the JSON text by a token JSON.stringify cannot produce. */
const rawToken = "\"__raw__\""

/** What one field can be broken into; `raw` values go into the text as is. */
/** Lone UTF-16 surrogates (JSON.stringify writes each as its `\u` escape): high, low, at either end, a reversed pair. */
export const loneSurrogates = ["\ud800", "a\udbffb", "\udc00z", "x\ud83d", "\udfff\ud800"] as const

/** `refused`: the input policy refuses the body whatever the endpoint (`400 parameter_invalid`). */
interface BrokenValue {
  readonly label: string
  readonly value?: Json
  readonly raw?: string
  readonly refused?: boolean
}

const brokenValue: fc.Arbitrary<BrokenValue> = fc.oneof(
  fc.constantFrom<BrokenValue>(
    { label: "number", value: 42 },
    { label: "string", value: "not what you expected" },
    { label: "object", value: { a: 1 } },
    { label: "array", value: [1, "2"] },
    { label: "null", value: null },
    { label: "boolean", value: true },
    { label: "huge string", value: "x".repeat(200_000) },
    { label: "NUL", value: "a\u0000b", refused: true },
    { label: "emoji", value: "🦄🔥👩‍👩‍👧‍👦" },
    ...loneSurrogates.map((value) => ({ label: `lone surrogate ${JSON.stringify(value)}`, value, refused: true })),
    { label: "lone surrogate nested", value: { note: ["ok", "\udc00"] }, refused: true },
    { label: "lone surrogate in a field name", value: { "k\ud800": 1 }, refused: true },
    { label: "deep nesting 40", raw: `${"[".repeat(40)}${"]".repeat(40)}` },
    { label: "deep nesting 5000", raw: `${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}` },
    { label: "1e999", raw: "1e999" },
    { label: "-1e999", raw: "-1e999" },
    { label: "2^64", raw: "18446744073709551616" },
    { label: "negative", value: -1 },
    { label: "fraction", value: 0.5 },
    { label: "max safe", value: Number.MAX_SAFE_INTEGER }
  ),
  fc.string().map((value) => ({ label: "random string", value })),
  fc.jsonValue({ maxDepth: 3 }).map((value) => ({ label: "random json", value }))
)

interface BrokenBody {
  readonly body: string
  readonly broken: string
  /** The input policy refuses it before any handler (`400 parameter_invalid`). */
  readonly refused?: boolean
}

/** Where a string can go in `value`: each string value and each field name, nested too, by path. */
const stringSpots = (value: Json): Array<{ readonly path: ReadonlyArray<string | number>; readonly key: boolean }> => {
  const spots: Array<{ readonly path: ReadonlyArray<string | number>; readonly key: boolean }> = []
  const stack: Array<readonly [Json, ReadonlyArray<string | number>]> = [[value, []]]
  while (stack.length > 0) {
    const [node, path] = stack.pop()!
    if (typeof node === "string") spots.push({ path, key: false })
    else if (Array.isArray(node)) node.forEach((child, i) => stack.push([child, [...path, i]]))
    else if (node !== null && typeof node === "object") {
      for (const [k, child] of Object.entries(node)) {
        spots.push({ path: [...path, k], key: true })
        stack.push([child, [...path, k]])
      }
    }
  }
  return spots
}

/** `body` (an object) with a lone surrogate put into one of its strings or field names, nested too. */
const withLoneSurrogate = (body: Json): fc.Arbitrary<BrokenBody> =>
  fc.tuple(fc.nat(), fc.constantFrom(...loneSurrogates)).map(([n, lone]) => {
    const copy = structuredClone(body)
    const spots = stringSpots(copy)
    const spot = spots[n % Math.max(spots.length, 1)]
    if (spot === undefined) {
      return { body: JSON.stringify({ ...copy, extra: lone }), broken: "lone surrogate in an added field", refused: true }
    }
    const parent = spot.path.slice(0, -1).reduce((node: Json, k) => node[k], copy)
    const last = spot.path[spot.path.length - 1]!
    if (spot.key) {
      const { [last]: child } = parent
      delete parent[last]
      parent[`${lone}${String(last)}`] = child
    } else parent[last] = `${lone}${parent[last]}`
    return {
      body: JSON.stringify(copy),
      broken: `lone surrogate ${JSON.stringify(lone)} in the ${spot.key ? "field name" : "value"} at ${JSON.stringify(spot.path)}`,
      refused: true
    }
  })

const brokenBody = (spec: Json, schema: Json): fc.Arbitrary<BrokenBody> =>
  valid(spec, schema).chain((body) => {
    const s = resolve(spec, schema)
    const keys = body !== null && typeof body === "object" && !Array.isArray(body) ? Object.keys(s.properties ?? {}) : []
    const whole = fc.oneof(
      fc.constantFrom(
        { body: "", broken: "empty body" },
        { body: "{", broken: "truncated JSON" },
        { body: "[]", broken: "array body" },
        { body: "null", broken: "null body" },
        { body: `${"[".repeat(100_000)}`, broken: "unclosed deep nesting" }
      ),
      fc.constant({ body: JSON.stringify(body), broken: "none (valid by the document)" })
    )
    if (keys.length === 0) return whole
    const field = fc.tuple(fc.constantFrom(...keys), brokenValue).map(([key, b]) => {
      const value = b.raw !== undefined ? "__raw__" : b.value
      const json = JSON.stringify({ ...body, [key]: value })
      return {
        body: b.raw !== undefined ? json.replace(rawToken, b.raw) : json,
        broken: `${key}: ${b.label}`,
        refused: b.refused === true
      }
    })
    const missing = fc.constantFrom(...keys).map((key) => {
      const { [key]: _, ...rest } = body
      return { body: JSON.stringify(rest), broken: `${key}: missing` }
    })
    const extra = brokenValue.map((b) => ({
      body: JSON.stringify({ ...body, unexpected_field: b.value ?? 1 }),
      broken: `extra field: ${b.label}`,
      refused: b.refused === true && b.value !== undefined
    }))
    return fc.oneof(
      { weight: 6, arbitrary: field },
      { weight: 2, arbitrary: missing },
      { weight: 1, arbitrary: extra },
      { weight: 1, arbitrary: whole },
      { weight: 1, arbitrary: withLoneSurrogate(body) }
    )
  })

/** Path ids: real ones from `ids`, then malformed ones. */
/** The longest path parameter the platform's router matches (find-my-way's `maxParamLength`). */
const maxRoutedParam = 100

const pathValue = (ids: ReadonlyArray<string>) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ids) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "%E0%A4%A",
        "%",
        "%00",
        "a".repeat(300),
        `agt_${"b".repeat(120)}`,
        "%F0%9F%A6%84",
        "..",
        "%2F",
        "tck_",
        "whs_0",
        "dlv_%20",
        "18446744073709551616",
        "-1"
      )
    },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map(encode) }
  )

/** Percent-encoding that keeps a lone surrogate (which `encodeURIComponent` refuses) as its UTF-8 replacement. */
const encode = (value: string) =>
  encodeURIComponent(value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"))

const queryValue = (spec: Json, schema: Json) =>
  fc.oneof(
    { weight: 2, arbitrary: valid(spec, schema).map((v) => (Array.isArray(v) ? v.map(String) : [String(v)])) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        ["\u0000"],
        ["x".repeat(5000)],
        ["1", "2"],
        ["-1"],
        ["1e999"],
        ["18446744073709551616"],
        ["🦄"],
        [""],
        ["%ZZ"]
      )
    },
    { weight: 1, arbitrary: fc.array(fc.string(), { minLength: 1, maxLength: 3 }) }
  )

const authHeader = (key: string) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant<Record<string, string>>({ authorization: `Bearer ${key}` }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<Record<string, string>>(
        {},
        { authorization: key },
        { authorization: `Basic ${key}` },
        { authorization: "Bearer" },
        { authorization: `Bearer ${key}x` },
        { authorization: "Bearer sk_test_abc" },
        { "x-api-key": key },
        { "x-api-key": "sk_live_nope" }
      )
    }
  )

const extraHeaders = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { "idempotency-key": "k".repeat(300) },
      { "idempotency-key": "with space" },
      { "idempotency-key": "" }
    )
  },
  { weight: 1, arbitrary: fc.uuid().map((u) => ({ "idempotency-key": u })) }
)

/** The media types of `contentType` the edge reads as JSON. */
const jsonTypes = new Set([
  "application/json",
  "application/merge-patch+json",
  "application/json; charset=utf-8",
  "application/vnd.api+json"
])

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "application/merge-patch+json",
      "application/json; charset=utf-8",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "",
      "application/vnd.api+json"
    )
  }
)

/** One request for `op`: valid by the document except, usually, in one place. */
export const requestFor = (
  spec: Json,
  op: Operation,
  context: { readonly key: string; readonly ids: ReadonlyArray<string> }
): fc.Arbitrary<FuzzRequest> =>
  fc
    .record({
      params: fc.tuple(...op.pathParams.map(() => pathValue(context.ids)), fc.constant("")),
      query: fc.array(
        op.query.length === 0
          ? fc.tuple(fc.constantFrom("unknown", "limit"), fc.constant(["1"]))
          : fc.constantFrom(...op.query).chain((q) => fc.tuple(fc.constant(q.name), queryValue(spec, q.schema))),
        { maxLength: 3 }
      ),
      auth: authHeader(context.key),
      extra: extraHeaders,
      type: contentType,
      body: op.method === "GET" || op.method === "HEAD"
        ? fc.constant({ body: undefined, broken: "no body" })
        : op.body === undefined
        ? fc.constantFrom({ body: undefined, broken: "no body" }, { body: "{}", broken: "empty object" }, { body: "{\"x\":1}", broken: "body on a bodiless endpoint" }, { body: "{", broken: "malformed body" })
        : brokenBody(spec, op.body)
    })
    .map(({ params, query, auth, extra, type, body }) => {
      let path = op.path
      op.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, params[i]!)))
      const search = query.flatMap(([name, values]) => values.map((v) => `${encode(name)}=${encode(v)}`))
      const headers: Record<string, string> = { ...auth, ...extra }
      if (body.body !== undefined && type !== "") headers["content-type"] = type
      // the key is checked first; once the router has matched the endpoint, the media type, then the body
      // (before the handler and Idempotency-Key); an id the router cannot match (too long for a path
      // parameter, an escaped `/`, a dot segment the URL parser removes) is no object of this route,
      // whatever the body
      const validKey = auth["authorization"] === `Bearer ${context.key}` || auth["x-api-key"] === context.key
      const routable = params.every((p) => p.length <= maxRoutedParam && !p.includes("%2F") && p !== "." && p !== "..")
      const refused = "refused" in body && body.refused === true && validKey && jsonTypes.has(type) && routable
      return {
        operationId: op.operationId,
        method: op.method,
        path: search.length > 0 ? `${path}?${search.join("&")}` : path,
        headers,
        body: body.body,
        broken: `${body.broken}; params ${JSON.stringify(params.slice(0, -1))}; query ${search.length}; headers ${Object.keys(headers).join(",")}`,
        ...(refused ? { expected: { status: 400, code: "parameter_invalid" } } : {})
      }
    })

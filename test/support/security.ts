/**
 * The security matrix every endpoint runs: each way a caller can be wrong, with
 * the status and code it must get. Later areas add their endpoints to it.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Scope } from "../../schema/Auth.js"
import type { HarnessShape, SeededWorkspace } from "./harness.js"

export interface SecuredEndpoint {
  readonly name: string
  readonly method: string
  /** Builds the path for a fresh workspace; may create what the path names. */
  readonly path: (ws: SeededWorkspace, h: HarnessShape) => Effect.Effect<string>
  readonly body?: unknown
  readonly scope: Scope
  /** A path naming an object of the *live* environment, for the cross-environment check. */
  readonly liveObjectPath?: (ws: SeededWorkspace, h: HarnessShape) => Effect.Effect<string>
  /** Widget keys may call it (it declares `WidgetScope`): its own tests check them instead of the generic row. */
  readonly widgetAllowed?: boolean
  /** Which kind of key it takes (default `secret`); a `widget` endpoint refuses secret keys instead. */
  readonly keyKind?: "secret" | "widget"
}

const expectError = (reply: { status: number; body: any }, status: number, code: string, label: string) => {
  expect(reply.status, `${label}: status (body ${JSON.stringify(reply.body)})`).toBe(status)
  expect(reply.body?.error?.code, label).toBe(code)
  expect(reply.body?.meta?.request_id, label).toMatch(/^req_/)
}

export const runSecurityMatrix = (h: HarnessShape, endpoint: SecuredEndpoint) =>
  Effect.gen(function* () {
    const ws = yield* h.seed()
    const path = yield* endpoint.path(ws, h)
    const call = (options: { key?: string; headers?: Record<string, string> }) =>
      h.call(endpoint.method, path, {
        ...options,
        ...(endpoint.body === undefined ? {} : { body: endpoint.body })
      })

    expectError(yield* call({}), 401, "missing_authorization", "no header")
    expectError(yield* call({ key: "sk_test_unknownunknownunknown00" }), 401, "invalid_api_key", "unknown key")
    expectError(yield* call({ key: "not-a-key" }), 401, "invalid_api_key", "malformed key")
    expectError(
      yield* call({ headers: { "x-api-key": "sk_test_unknownunknownunknown00" } }),
      401,
      "invalid_api_key",
      "unknown legacy key"
    )

    const kind = endpoint.keyKind ?? "secret"
    const revoked = yield* ws.key({ kind })
    yield* ws.revoke(revoked.id)
    expectError(yield* call({ key: revoked.secret }), 401, "invalid_api_key", "revoked key")

    if (kind === "widget") expectError(yield* call({ key: ws.secretTest }), 403, "key_scope_mismatch", "secret key")
    else if (!endpoint.widgetAllowed) expectError(yield* call({ key: ws.widgetTest }), 403, "key_scope_mismatch", "widget key")
    expectError(yield* call({ key: ws.formsTest }), 403, "key_scope_mismatch", "forms key")

    // a key with some other scope than the endpoint's
    const otherScope =
      kind === "widget"
        ? endpoint.scope === "widget:chat" ? "widget:tickets" : "widget:chat"
        : endpoint.scope === "read:usage" ? "read:agents" : "read:usage"
    const narrowed = yield* ws.key({ kind, scopes: [otherScope] })
    expectError(yield* call({ key: narrowed.secret }), 403, "key_scope_mismatch", `key without ${endpoint.scope}`)

    // the right scope passes authentication whatever the outcome of the call itself
    const exact = yield* ws.key({ kind, scopes: [endpoint.scope] })
    const allowed = yield* call({ key: exact.secret })
    const passed = (status: number) => status < 500 && status !== 401 && status !== 403
    expect(passed(allowed.status), `key with exactly ${endpoint.scope}: got ${allowed.status} ${allowed.text}`).toBe(true)

    // the legacy header authenticates like the bearer one: on a fresh object (the first call may
    // have deleted or changed its own) it gets the very same answer
    const legacyPath = yield* endpoint.path(ws, h)
    const legacy = yield* h.call(endpoint.method, legacyPath, {
      headers: { "x-api-key": exact.secret },
      ...(endpoint.body === undefined ? {} : { body: endpoint.body })
    })
    expect(legacy.status, `legacy x-api-key (body ${legacy.text})`).toBe(allowed.status)

    if (endpoint.liveObjectPath !== undefined) {
      const livePath = yield* endpoint.liveObjectPath(ws, h)
      const crossed = yield* h.call(endpoint.method, livePath, {
        key: kind === "widget" ? ws.widgetTest : ws.secretTest,
        ...(endpoint.body === undefined ? {} : { body: endpoint.body })
      })
      expectError(crossed, 404, "resource_missing", "sandbox key on a live object")
    }
  })

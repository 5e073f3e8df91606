/**
 * A poison job across real processes, on the wall clock: the service (a child process; embedded PGlite on a temp
 * DATA_DIR, or a throwaway PostgreSQL database when DATABASE_URL is set) reads a page from a local site that never
 * answers, and is killed with SIGKILL while each attempt waits for it, then started again on the same data: a
 * process that dies mid-attempt, as one whose decoder crashes does. The lease is short (`INGEST_LEASE_MS`), so each
 * new process takes the job over soon. After the last attempt the next process does not fetch the page again: the
 * source is `failed` with `processing_stopped`, and the agent's next source is indexed.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import {
  bootstrapSecret,
  type Child,
  cleanupAll,
  createAgent,
  freePort,
  host,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  tempDir,
  throwawayDatabase
} from "../../scripts/bench/lib.js"
import { JOB_MAX_ATTEMPTS, stoppedMessage } from "../../src/knowledge/Pipeline.js"

afterAll(cleanupAll)

/** A site that takes every request and never answers; counts them. */
const silentSite = (): Promise<{ origin: string; requests: () => number; close: () => Promise<void> }> =>
  new Promise((resolve) => {
    let requests = 0
    const server: Server = createServer(() => void requests++)
    server.listen(0, host, () =>
      resolve({
        origin: `http://${host}:${(server.address() as AddressInfo).port}`,
        requests: () => requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    )
  })

const api = async (base: string, key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  return { status: res.status, body: (await res.json()) as any }
}

/** Polls every 100 ms, at most `limitMillis`, until `done` holds. */
const until = async <A>(read: () => Promise<A> | A, done: (a: A) => boolean, limitMillis: number, label: string): Promise<A> => {
  const deadline = performance.now() + limitMillis
  let last = await read()
  while (!done(last)) {
    if (performance.now() > deadline) throw new Error(`${label}: not reached in ${limitMillis} ms: ${JSON.stringify(last)}`)
    await sleep(100)
    last = await read()
  }
  return last
}

const kill = async (child: Child) => {
  child.process.kill("SIGKILL")
  await new Promise<void>((resolve) =>
    child.process.exitCode !== null || child.process.signalCode !== null ? resolve() : child.process.once("exit", () => resolve())
  )
}

describe("a job whose attempts kill their process", () => {
  it("is failed after its last attempt, not run again, and the agent's next source is indexed", async () => {
    const site = await silentSite()
    const port = await freePort()
    const extra: Record<string, string> = process.env["DATABASE_URL"]
      ? { DATABASE_URL: await throwawayDatabase({ serverUrl: process.env["DATABASE_URL"], prefix: "t_poison" }) }
      : { DATA_DIR: await tempDir("poison") }
    const env = serviceEnv({
      PORT: String(port),
      ALLOW_PRIVATE_URLS: "true",
      INGEST_LEASE_MS: "1500",
      INGEST_POLL_MS: "200",
      // longer than the test waits for an attempt: each one is still fetching when its process is killed
      INGEST_FETCH_TIMEOUT_MS: "120000",
      ...extra
    })
    const base = `http://${host}:${port}`
    let child: Child = (await startTimed(() => spawnService(env), port)).child
    try {
      const key = bootstrapSecret(child)
      const agentId = await createAgent(base, key)
      const poison = await api(base, key, "POST", `/v1/agents/${agentId}/knowledge`, { type: "url", url: `${site.origin}/poison` })
      const next = await api(base, key, "POST", `/v1/agents/${agentId}/knowledge`, {
        type: "text",
        title: "Returns",
        content: "Returns are accepted within thirty days."
      })
      expect([poison.status, next.status]).toEqual([201, 201])
      const read = async (id: string) => (await api(base, key, "GET", `/v1/agents/${agentId}/knowledge/${id}`)).body.data
      for (let attempt = 1; attempt <= JOB_MAX_ATTEMPTS; attempt++) {
        await until(site.requests, (n) => n === attempt, 30_000, `attempt ${attempt}`)
        await kill(child)
        child = (await startTimed(() => spawnService(env), port)).child
      }
      const failed = await until(() => read(poison.body.data.id), (s) => s.status === "failed", 30_000, "the give-up")
      expect(failed).toMatchObject({ status: "failed", attempts: JOB_MAX_ATTEMPTS, error: stoppedMessage, error_code: "processing_stopped" })
      const indexed = await until(() => read(next.body.data.id), (s) => s.status === "indexed", 30_000, "the next source")
      expect(indexed.status).toBe("indexed")
      // a lease more, and a poll: nothing fetches the page again
      await sleep(2_000)
      expect(site.requests()).toBe(JOB_MAX_ATTEMPTS)
    } finally {
      child.process.kill("SIGTERM")
      await site.close()
    }
  }, 240_000)
})

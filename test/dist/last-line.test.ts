/**
 * The last line of defence, through the bundle: an error that escapes every
 * handler (thrown from a library's event handler, or a promise nobody awaits)
 * ends the process at once with code 70 and one line at fatal level naming it,
 * so a supervisor starts it afresh. The escape is `--import`ed (`escape.mjs`)
 * and set off by a signal, so nothing in the service is there for the test.
 */
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { cleanupAll, databaseName, setupTimeout, startService } from "./support.js"

afterAll(cleanupAll)

const escapeHook = pathToFileURL(new URL("./escape.mjs", import.meta.url).pathname).href

const exitOf = (service: Awaited<ReturnType<typeof startService>>) =>
  new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const p = service.child.process
    if (p.exitCode !== null || p.signalCode !== null) return resolve({ code: p.exitCode, signal: p.signalCode })
    p.once("exit", (code, signal) => resolve({ code, signal }))
  })

describe(`the last line of defence (${databaseName})`, () => {
  for (const [kind, origin, named] of [
    ["throw", "uncaughtException", "Error: thrown from a library's event handler"],
    ["reject", "unhandledRejection", "Error: a promise a library left unawaited"]
  ] as const) {
    it(`${origin}: one fatal line naming it, then exit code 70`, async () => {
      const service = await startService({ NODE_OPTIONS: `--import=${escapeHook}`, ESCAPE: kind })
      const exit = exitOf(service)
      service.child.process.kill("SIGUSR2")
      expect(await exit).toEqual({ code: 70, signal: null })
      const fatal = service
        .output()
        .split("\n")
        .filter((line) => line.includes('"level":"fatal"'))
      expect(fatal).toHaveLength(1)
      expect(JSON.parse(fatal[0]!)).toMatchObject({
        level: "fatal",
        msg: `${origin}: ${named}; exiting so a supervisor starts the service afresh`
      })
    }, setupTimeout)
  }
})

/** The real CLI as a child process (`src/cli/main.ts` through tsx; not a terminal, so plain lines), bounded at 90 s. */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"

export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", ...args],
      { env: { ...process.env, ...env }, timeout: 90_000 },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    )
    return Effect.sync(() => void child.kill())
  })

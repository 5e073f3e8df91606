/**
 * `npm start` / `npm run cli`: runs the bundle (`dist/server.mjs` or
 * `dist/cli.mjs`) in this very process, building it first when a source is
 * newer. No tsx and no child process stay between the caller and the service,
 * so a signal to the started process reaches the server itself.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundleIsStale } from "./freshness.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const targets = { server: "server.mjs", cli: "cli.mjs" }
const target = process.argv[2]
if (!(target in targets)) {
  process.stderr.write(`usage: node scripts/start.mjs server|cli [args…]\n`)
  process.exit(2)
}
const bundle = join(root, "dist", targets[target])

const stale = bundleIsStale(root, bundle)
if (stale) {
  // build output goes to stderr so `npm run cli -- … --json` keeps a clean stdout
  const built = spawnSync(process.execPath, ["--import", "tsx", join(root, "scripts/build.ts")], {
    cwd: root,
    stdio: ["ignore", 2, 2]
  })
  if (built.status !== 0) process.exit(built.status ?? 1)
}

// The bundle reads its own arguments from process.argv: drop the target name.
process.argv.splice(2, 1)
await import(pathToFileURL(bundle).href)

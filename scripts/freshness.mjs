/** Whether a bundle in `dist/` is older than the sources it is built from (for `npm start` and the bundle test). */
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

/** What `scripts/build.ts` reads: a change to any of them calls for a new build. */
export const buildInputs = ["src", "layers", "schema", "docs/reference", "scripts/build.ts", "package-lock.json"]

/** Newest modification time under `path` (a file or a folder, walked with an explicit bounded stack). */
const newest = (path) => {
  let latest = 0
  const stack = [path]
  for (let visited = 0; stack.length > 0 && visited < 100_000; visited++) {
    const current = stack.pop()
    if (!existsSync(current)) continue
    const stat = statSync(current)
    if (stat.isDirectory()) for (const entry of readdirSync(current)) stack.push(join(current, entry))
    else latest = Math.max(latest, stat.mtimeMs)
  }
  return latest
}

/** True when `bundle` is missing or a build input under `root` changed after it was written. */
export const bundleIsStale = (root, bundle) =>
  !existsSync(bundle) || Math.max(...buildInputs.map((p) => newest(join(root, p)))) > statSync(bundle).mtimeMs

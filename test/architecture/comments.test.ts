/**
 * No comment sends a reader to a file the repository does not have: every file name or path a comment gives
 * is found in the tree. The bundle's outputs under `dist/` are made by the build, and a name a user writes on a
 * command line is theirs, so both are allowed; a glob (`src/*` and a name) names no one file.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const root = resolve(import.meta.dirname, "../..")
const skipped = new Set(["node_modules", "dist", "data", ".git", ".scratch", "artifacts"])

const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    if (dir === root && skipped.has(name)) return []
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [relative(root, path)]
  })

const tree = walk(root)
const basenames = new Set(tree.map((f) => f.split("/").pop()!))

/** What `scripts/build.ts` writes, and the file a user names on `evaluate --cases`. */
const madeElsewhere = new Set(["server.mjs", "cli.mjs", "ai-worker.mjs", "decoder-process.mjs", "pglite-worker.mjs", "chunks.json", "cases.json"])

const exists = (name: string): boolean => {
  const path = name.replace(/^\.\//, "")
  if (path.startsWith("dist/") || madeElsewhere.has(path)) return true
  return path.includes("/") ? tree.some((f) => f === path || f.endsWith(`/${path}`)) : basenames.has(path)
}

const comments = (text: string): Array<string> => text.match(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g) ?? []

describe("comments", () => {
  it("name only files the repository has", () => {
    const dangling = tree
      .filter((f) => /^(src|layers|schema|scripts|test)\//.test(f) && /\.(ts|tsx|mjs)$/.test(f))
      .flatMap((file) =>
        comments(readFileSync(join(root, file), "utf8")).flatMap((comment) =>
          [...comment.matchAll(/(?<![*\w./-])[\w.][\w./-]*\.(?:ts|tsx|md|json|mjs)\b/g)]
            .map((m) => m[0])
            .filter((name) => !exists(name))
            .map((name) => `${file}: ${name}`)
        )
      )
    expect(dangling).toEqual([])
  })
})

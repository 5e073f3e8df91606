/**
 * The one-way import rule, checked on the source text: `schema/` imports
 * nothing of the project's, `layers/` only `schema/` (and itself), no two
 * `src/` folders import each other (directly or round a longer loop), no two
 * `layers/` files either, no folder imports another's repository, no write
 * statement outside a repository, and nothing imports `test/`. Also the one scheme of service tag keys.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const root = resolve(import.meta.dirname, "../..")
const roots = ["src", "layers", "schema"] as const

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : /\.tsx?$/.test(name) ? [path] : []
  })

// static `import`/`export ... from` and dynamic `import("...")`, relative specifiers only
const specifiers = (text: string): Array<string> => [
  ...[...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']/g)].map((m) => m[1]!),
  ...[...text.matchAll(/(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g)].map((m) => m[1]!),
  ...[...text.matchAll(/import\(\s*["'](\.[^"']+)["']\s*\)/g)].map((m) => m[1]!)
]

interface Edge {
  readonly from: string
  readonly to: string
}

/** Every import between project files, as paths relative to the repository root. */
const edges: Array<Edge> = roots.flatMap((r) =>
  filesUnder(join(root, r)).flatMap((file) =>
    specifiers(readFileSync(file, "utf8")).map((spec) => ({
      from: relative(root, file),
      to: relative(root, resolve(dirname(file), spec)).replace(/\.js$/, ".ts")
    }))
  )
)

const top = (path: string) => path.split("/")[0]!

/** The unit of the folder rule: `src/<folder>`, or the file itself for files directly in `src/`. */
const unitOf = (path: string): string => {
  const parts = path.split("/")
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path
}

/** One cycle of the graph, as the list of its nodes, or none. */
const findCycle = (graph: ReadonlyMap<string, ReadonlySet<string>>): Array<string> | undefined => {
  const state = new Map<string, "open" | "done">()
  const stack: Array<string> = []
  const visit = (node: string): Array<string> | undefined => {
    state.set(node, "open")
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") return [...stack.slice(stack.indexOf(next)), next]
      if (state.get(next) === undefined) {
        const found = visit(next)
        if (found !== undefined) return found
      }
    }
    stack.pop()
    state.set(node, "done")
    return undefined
  }
  for (const node of graph.keys()) {
    if (state.get(node) === undefined) {
      const found = visit(node)
      if (found !== undefined) return found
    }
  }
  return undefined
}

const show = (list: ReadonlyArray<Edge>) => list.map((e) => `${e.from} -> ${e.to}`).join("\n")

describe("import graph", () => {
  it("sees the project's imports", () => {
    // guards the parser: an empty graph would pass every rule below
    expect(edges.length).toBeGreaterThan(100)
    expect(edges.some((e) => e.from === "src/Server.ts" && e.to === "src/Startup.ts")).toBe(true)
  })

  it("schema/ imports nothing of the project's", () => {
    expect(show(edges.filter((e) => top(e.from) === "schema" && top(e.to) !== "schema"))).toBe("")
  })

  it("layers/ imports only schema/ and layers/", () => {
    expect(show(edges.filter((e) => top(e.from) === "layers" && !["schema", "layers"].includes(top(e.to))))).toBe("")
  })

  it("nothing imports test/", () => {
    expect(show(edges.filter((e) => top(e.to) === "test"))).toBe("")
  })

  it("the browser components (src/forms/element/, src/widget/element/) and the server import nothing of each other", () => {
    const browser = (path: string) => path.startsWith("src/forms/element/") || path.startsWith("src/widget/element/")
    // the text catalogue is plain data both sides read, importing nothing but its JSON files
    const catalogue = (path: string) => path.startsWith("schema/texts/")
    expect(edges.some((e) => e.from.startsWith("src/forms/element/"))).toBe(true)
    expect(edges.some((e) => e.from.startsWith("src/widget/element/"))).toBe(true)
    expect(show(edges.filter((e) => browser(e.from) !== browser(e.to) && !(browser(e.from) && catalogue(e.to))))).toBe("")
    expect(show(edges.filter((e) => catalogue(e.from) && !/^schema\/texts\/\w+\.json$/.test(e.to)))).toBe("")
  })

  it("the admin console (src/console/app/, browser code) imports only itself and schema/ (types), and nothing imports it", () => {
    const browser = (path: string) => path.startsWith("src/console/app/")
    expect(edges.some((e) => browser(e.from))).toBe(true)
    expect(show(edges.filter((e) => browser(e.from) && !browser(e.to) && top(e.to) !== "schema"))).toBe("")
    expect(show(edges.filter((e) => !browser(e.from) && browser(e.to)))).toBe("")
    // schema/ gives types only, but for plain-data modules that import nothing: a value import of another
    // would bundle Effect's Schema into the page
    const plainData = (spec: string) => !/^\s*import\s/m.test(readFileSync(resolve(root, spec.replace(/^(\.\.\/)+/, "").replace(/\.js$/, ".ts")), "utf8"))
    const valueImports = filesUnder(join(root, "src/console/app")).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/(?:^|\n)\s*import\s+(?!type\s)(?:(?!\bfrom\b)[^;])*from\s*["']((?:\.\.\/)+schema\/[^"']+)["']/g)]
        .filter((m) => !plainData(m[1]!))
        .map((m) => `${relative(root, file)} -> ${m[1]}`)
    )
    expect(valueImports.join("\n")).toBe("")
  })

  it("no cycle between layers/ files", () => {
    const graph = new Map<string, Set<string>>()
    for (const e of edges) {
      if (top(e.from) !== "layers" || top(e.to) !== "layers") continue
      graph.set(e.from, (graph.get(e.from) ?? new Set()).add(e.to))
    }
    expect(findCycle(graph)?.join(" -> ") ?? "", "a cycle between layers/ files").toBe("")
  })

  it("an area reaches another's data through that area's services: no src/ folder imports another's repository", () => {
    const repository = (path: string) => /Repo\.ts$/.test(path)
    expect(edges.some((e) => repository(e.to) && unitOf(e.from) === unitOf(e.to))).toBe(true)
    const across = edges.filter((e) => top(e.from) === "src" && repository(e.to) && unitOf(e.from) !== unitOf(e.to))
    expect(show(across)).toBe("")
  })

  it("every write statement is in a repository (src/db/ holds the migrations and the repositories' helpers)", () => {
    const writes = /\b(insert\s+into|update\s+\w+\s+set|delete\s+from)\b/i
    const files = filesUnder(join(root, "src")).map((file) => relative(root, file))
    const writers = files.filter((file) => writes.test(readFileSync(join(root, file), "utf8")))
    expect(writers.some((file) => /Repo\.ts$/.test(file))).toBe(true)
    expect(writers.filter((file) => !/Repo\.ts$/.test(file) && !file.startsWith("src/db/")).join("\n")).toBe("")
  })

  it("no cycle between src/ folders", () => {
    const graph = new Map<string, Set<string>>()
    for (const e of edges) {
      if (top(e.from) !== "src" || top(e.to) !== "src") continue
      const [from, to] = [unitOf(e.from), unitOf(e.to)]
      if (from === to) continue
      graph.set(from, (graph.get(from) ?? new Set()).add(to))
    }
    const cycle = findCycle(graph)
    const detail =
      cycle === undefined
        ? ""
        : `${cycle.join(" -> ")}\nthrough:\n${show(
            edges.filter((e) => cycle.some((u, i) => i > 0 && unitOf(e.from) === cycle[i - 1] && unitOf(e.to) === u))
          )}`
    expect(detail, "a cycle between src/ folders").toBe("")
  })
})

describe("service tag keys", () => {
  // `Context.Tag("…")`, `Context.Reference<X>()("…")`, `Effect.Service<X>()("…")`
  const tagKey = /(?:Context\.Tag|Context\.Reference<\w+>\(\)|Effect\.Service<\w+>\(\))\(\s*"([^"]+)"/g
  const keys = (["src", "layers"] as const).flatMap((r) =>
    filesUnder(join(root, r)).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(tagKey)].map((m) => ({ file: relative(root, file), key: m[1]! }))
    )
  )

  /** `Layers/<Name>` in layers/; `<Folder>/<Name>` in src/<folder>/ (capitalised); `App/<Name>` directly in src/. */
  const areaOf = (file: string): string => {
    const parts = file.split("/")
    if (parts[0] === "layers") return "Layers"
    return parts.length > 2 ? parts[1]!.charAt(0).toUpperCase() + parts[1]!.slice(1) : "App"
  }

  it("one scheme: <Area>/<Name>", () => {
    expect(keys.length).toBeGreaterThan(50)
    const off = keys.filter(({ file, key }) => !new RegExp(`^${areaOf(file)}/[A-Za-z]+$`).test(key))
    expect(off.map(({ file, key }) => `${file}: "${key}" (expected "${areaOf(file)}/<Name>")`).join("\n")).toBe("")
  })

  it("no two services share a key", () => {
    const seen = new Map<string, string>()
    const twice = keys.flatMap(({ file, key }) => {
      const first = seen.get(key)
      seen.set(key, file)
      return first === undefined ? [] : [`"${key}": ${first} and ${file}`]
    })
    expect(twice.join("\n")).toBe("")
  })
})

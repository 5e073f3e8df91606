import { expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { ErrorCatalog } from "../../schema/Errors.js"
import { originsByKeyKind } from "../../schema/Tickets.js"

// doc_url points at these rows: the README must list every code with its status and type
it("the README's error table lists every code of the catalog", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const missing = ErrorCatalog.filter(
    (cls) => !readme.includes(`| <a id="${cls.code}"></a>\`${cls.code}\` | ${cls.status} | \`${cls.type}\` |`)
  ).map((cls) => cls.code)
  expect(missing).toEqual([])
})

const shellBlocks = () =>
  [...readFileSync(new URL("../../README.md", import.meta.url), "utf8").matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

// examples that work as pasted (checked by hand against a running service; these keep what made them work)
it("the README's widget examples name an agent that allows their Origin, made before them", () => {
  const blocks = shellBlocks()
  const widget = blocks.flatMap((block, i) => (/\/widget\/v1\/agents\//.test(block) && /Origin: /.test(block) ? [i] : []))
  expect(widget.length).toBeGreaterThan(0)
  for (const i of widget) {
    const block = blocks[i]!
    expect(block, "a real agent id, not a placeholder").not.toMatch(/\/widget\/v1\/agents\/agt_…/)
    const agent = block.match(/\/widget\/v1\/agents\/\$(\w+)/)?.[1]
    expect(agent, block).toBeDefined()
    const origin = block.match(/Origin: ([^'"\s]+)/)![1]!
    // the block, or one before it, creates that agent with the origin allowed
    const made = blocks
      .slice(0, i + 1)
      .some((b) => new RegExp(`${agent}=\\$\\(curl [^)]*"allowed_origins":\\[[^\\]]*"${origin.replace(/[.]/g, "\\.")}"`).test(b))
    expect(made, `${agent} allows ${origin}`).toBe(true)
  }
})

it("the README's training example creates its own training agent", () => {
  const course = shellBlocks().filter((b) => /\/v1\/agents\/\$\w+\/(modules|lessons)/.test(b))
  expect(course.length).toBeGreaterThan(0)
  for (const block of course) {
    const agent = block.match(/\/v1\/agents\/\$(\w+)\/modules/)?.[1]
    expect(agent, block).toBeDefined()
    expect(block).toMatch(new RegExp(`${agent}=\\$\\(curl [^)]*"type":"training"`))
  }
})

it("the README's Admin CLI section names the --json field of each key kind", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const section = readme.slice(readme.indexOf("## Admin CLI"), readme.indexOf("## Observability"))
  for (const [kind, prefix] of [["secret", "sk_test_…"], ["widget", "widget_pk_test_…"], ["forms", "pk_test_…"]]) {
    expect(section).toContain(`\`${kind}\` (\`${prefix}\``)
  }
})

// the README is the overview: the reference is the served contract, and its links and scripts must exist
it("the README's links name files of the repository, its npm scripts exist, and it points at the served reference", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const links = [...readme.matchAll(/\]\(([^)#:]+)\)/g)].map((m) => m[1]!)
  expect(links.length).toBeGreaterThan(0)
  for (const link of links) expect(existsSync(new URL(`../../${link}`, import.meta.url)), link).toBe(true)
  const scripts = Object.keys(JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).scripts)
  for (const [, name] of readme.matchAll(/npm run (?:-s )?([\w-]+)/g)) expect(scripts, name).toContain(name)
  expect(readme).toContain("/docs")
  expect(readme).toContain("GET /v1/openapi.json")
})

// the server's rule (schema/Tickets.ts originsByKeyKind, enforced in src/tickets), as the Decisions list words it
it("the README's ticket decision gives each kind of key exactly the origins the server lets it create", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const line = readme.slice(readme.indexOf("- Tickets: secret keys create"), readme.indexOf("\n- ", readme.indexOf("- Tickets: secret keys create") + 1))
  const named = (origins: ReadonlyArray<string>) => origins.map((o) => `\`${o}\``)
  expect(line).toContain(`secret keys create origin ${named(originsByKeyKind.secret).join(", ")} only`)
  expect(line).toContain(`widget keys ${named(originsByKeyKind.widget).join(" (default) or ")}`)
  expect(line).not.toMatch(/relay|may also/)
})

import { expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { ErrorCatalog } from "../../schema/Errors.js"

// doc_url points at these rows: the README must list every code with its status and type
it("the README's error table lists every code of the catalog", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const missing = ErrorCatalog.filter(
    (cls) => !readme.includes(`| <a id="${cls.code}"></a>\`${cls.code}\` | ${cls.status} | \`${cls.type}\` |`)
  ).map((cls) => cls.code)
  expect(missing).toEqual([])
})

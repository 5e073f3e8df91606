/**
 * The build's check for on-demand imports that break only in the bundle: a
 * CommonJS package loaded with `import()` has no named exports there.
 */
import { build } from "esbuild"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../../scripts/bench/lib.js"
import { lazyCommonJs } from "../../scripts/bundleCheck.js"

const metafileOf = async (contents: string) => {
  const result = await build({
    stdin: { contents, resolveDir: repoRoot, sourcefile: "entry.ts", loader: "ts" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    outdir: "unused",
    write: false,
    metafile: true,
    logLevel: "silent",
    external: ["sharp"]
  })
  return result.metafile
}

describe("the bundle check", () => {
  it("names a module that loads a CommonJS package with import()", async () => {
    const problems = lazyCommonJs(await metafileOf(`export const load = () => import("@mozilla/readability")`))
    expect(problems).toEqual([expect.stringContaining("entry.ts loads the CommonJS module @mozilla/readability with import()")])
  })

  it("lets through a module of ours that imports the package statically, ESM packages and externals", async () => {
    const problems = lazyCommonJs(
      await metafileOf(
        [
          `export const smtp = () => import("./layers/mailer/Smtp.ts")`,
          `export const scalar = () => import("@effect/platform/HttpApiScalar")`,
          `export const sharp = () => import("sharp")`
        ].join("\n")
      )
    )
    expect(problems).toEqual([])
  })
})

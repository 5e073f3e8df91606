/**
 * `npm run build`: `dist/` runs the service with nothing but Node.
 *
 *   dist/server.mjs, dist/cli.mjs    esbuild bundles (ESM, platform node), chunk-*.mjs loaded on demand
 *   dist/pglite-worker.mjs           the thread the embedded database runs on (`layers/pglite/Thread.ts`)
 *   dist/ai-worker.mjs               the thread of the local AI provider's long work (`layers/ai/LocalThread.ts`)
 *   dist/decoder-process.mjs         the processes untrusted inputs are read in (`layers/Decoders.ts`)
 *   dist/pglite.{wasm,data}, initdb.wasm, vector.tar.gz
 *                                    PGlite's files, found beside the bundle (`new URL(..., import.meta.url)`)
 *   dist/pglite-template/            an initialised, migrated empty database, copied at a first start
 *                                    (opened then as an existing one, not created by initdb)
 *   dist/node_modules/…              the packages left external, with their dependencies
 *                                    (the reference's Markdown, `docs/reference/*.md`, is in the bundle)
 *   dist/chunks.json                 each chunk's source files (for the check that the bundle suite loads them all)
 *   dist/widget/v1/service-form-element.esm.js
 *                                    the `<service-form>` component, served as it is
 *   dist/widget/v1/service-chat-element.esm.js
 *                                    the `<service-chat>` component (fails the build past 30 KB gzipped)
 *   dist/console/app.{js,css}        the admin console served at `/console` (its entry script's gzipped size printed,
 *   dist/console/chunk-*.js          checked against its budget) and its pages' chunks, loaded on demand (each measured)
 *
 * Each step is one entry of `steps`: a new asset is one more entry.
 */
import { build, type BuildOptions, type Plugin } from "esbuild"
import * as Effect from "effect/Effect"
import { copyFile, cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { writePgliteTemplate } from "../layers/pglite/Client.js"
import { chunkInputs, lazyCommonJs } from "./bundleCheck.js"
import { builtElementFile, writeElementBundle } from "../src/forms/ElementBundle.js"
import { builtChatElementFile, maxChatScriptGzipBytes, writeChatElementBundle } from "../src/widget/ElementBundle.js"
import { builtConsoleDir, writeConsoleBundle } from "../src/console/ConsoleBundle.js"
import { runMigrations } from "../src/db/Migrator.js"
import { migrations } from "../src/db/migrations/index.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")

/**
 * Left out of the bundle, shipped in `dist/node_modules`:
 * - `sharp`: a native addon plus libvips shared libraries, loaded by path from its platform package;
 * - `tesseract.js`: starts its worker thread from a file of its own package and loads its wasm core by path;
 * - the traineddata packages: found at run time with `require.resolve`, never imported statically;
 * - `regenerate-unicode-properties`: a module a Unicode property, loaded as form patterns name them.
 * Everything else (PGlite, pg, ioredis, nodemailer, linkedom, unpdf, …) is bundled.
 */
const externals = ["sharp", "tesseract.js", "@tesseract.js-data/eng", "@tesseract.js-data/spa", "regenerate-unicode-properties"]

/**
 * Never reached from `dist/`: the service bundles the form component with
 * esbuild only when no prebuilt file is beside it, and the build writes one.
 */
const unreachable = ["esbuild"]

/** Bundled CommonJS modules still call `require`, `__filename`, `__dirname`: give them the ESM equivalents. */
const banner = [
  `import { createRequire as __createRequire } from "node:module";`,
  `import { fileURLToPath as __fileURLToPath } from "node:url";`,
  `const require = __createRequire(import.meta.url);`,
  `const __filename = __fileURLToPath(import.meta.url);`,
  `const __dirname = __fileURLToPath(new URL(".", import.meta.url));`
].join("\n")

/**
 * The reference's Markdown (`docs/reference/*.md`) read at build: the module that reads the files from the
 * sources' tree (`schema/ReferenceFiles.ts`) becomes their text, so the bundle reads no file for it.
 */
const referenceInlined: Plugin = {
  name: "reference-inlined",
  setup: (build) => {
    build.onLoad({ filter: /schema[\\/]ReferenceFiles\.ts$/ }, async () => {
      const folder = join(root, "docs/reference")
      const files = (await readdir(folder)).filter((file) => file.endsWith(".md"))
      const texts = Object.fromEntries(
        await Promise.all(files.map(async (file) => [file.slice(0, -3), await readFile(join(folder, file), "utf8")] as const))
      )
      return {
        loader: "ts",
        watchFiles: files.map((file) => join(folder, file)),
        contents: [
          `const texts: Record<string, string> = ${JSON.stringify(texts)}`,
          "export const referenceFile = (name: string): string => {",
          "  const text = texts[name]",
          "  if (text === undefined) throw new Error(`docs/reference/${name}.md was not in the build`)",
          "  return text",
          "}"
        ].join("\n")
      }
    })
  }
}

/**
 * The entry points in one build; code loaded on demand (`import("unpdf")`,
 * `import("sharp")`) becomes a chunk read on first use. Chunks stay beside
 * the entries: bundled packages find their files relative to `import.meta.url`.
 */
const bundle = async () => {
  const options: BuildOptions = {
    entryPoints: {
      server: join(root, "src/main.ts"),
      cli: join(root, "src/cli/main.ts"),
      "pglite-worker": join(root, "layers/pglite/Worker.ts"),
      "ai-worker": join(root, "layers/ai/LocalWorker.ts"),
      "decoder-process": join(root, "layers/extractor/Child.ts")
    },
    outdir: dist,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...externals, ...unreachable],
    banner: { js: banner },
    minifySyntax: true,
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
    plugins: [referenceInlined]
  }
  const result = await build(options)
  const problems = lazyCommonJs(result.metafile!)
  if (problems.length > 0) throw new Error(`the bundle would break on demand:\n${problems.join("\n")}`)
  await writeFile(join(dist, "chunks.json"), JSON.stringify(chunkInputs(result.metafile!), null, 1))
}


/** The package folder `name` resolves to from `from`, as Node would look it up. */
const packageDir = (name: string, from: string): string | undefined => {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name)
    if (existsSync(join(candidate, "package.json"))) return candidate
    if (dir === dirname(dir) || dir === root) return undefined
  }
}

/**
 * Copies each external with its installed dependencies (optional ones only
 * when installed: other platforms' binaries are not), keeping the folder
 * layout of `node_modules` so Node resolves them the same way from `dist/`.
 */
const copyExternals = async () => {
  const seen = new Set<string>()
  const visit = async (name: string, from: string): Promise<void> => {
    const dir = packageDir(name, from)
    if (dir === undefined || seen.has(dir)) return
    seen.add(dir)
    await cp(dir, join(dist, relative(root, dir)), { recursive: true, dereference: true })
    const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>
      optionalDependencies?: Record<string, string>
    }
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) await visit(dep, dir)
  }
  for (const name of externals) await visit(name, root)
}

const copyPgliteFiles = async () => {
  const pglite = join(root, "node_modules/@electric-sql/pglite/dist")
  for (const file of ["pglite.wasm", "pglite.data", "initdb.wasm"]) await copyFile(join(pglite, file), join(dist, file))
  await copyFile(join(root, "node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz"), join(dist, "vector.tar.gz"))
}

const writeTemplate = () => Effect.runPromise(writePgliteTemplate(runMigrations(migrations), join(dist, "pglite-template")))

export const steps: ReadonlyArray<{ readonly name: string; readonly run: () => Promise<void> }> = [
  { name: "server and CLI bundles", run: bundle },
  { name: "PGlite files", run: copyPgliteFiles },
  { name: "external packages", run: copyExternals },
  { name: "database template", run: writeTemplate },
  { name: "form component", run: () => Effect.runPromise(Effect.asVoid(writeElementBundle(join(dist, builtElementFile)))) },
  {
    name: "chat component",
    run: async () => {
      const { bytes, gzipped } = await Effect.runPromise(writeChatElementBundle(join(dist, builtChatElementFile)))
      console.log(`build: chat script ${(bytes / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped (budget ${maxChatScriptGzipBytes / 1024} KB)`)
    }
  },
  {
    name: "admin console",
    run: async () => {
      const { bytes, gzipped, chunks } = await Effect.runPromise(writeConsoleBundle(join(dist, builtConsoleDir)))
      const kb = (n: number) => (n / 1024).toFixed(1)
      console.log(`build: console entry script ${kb(bytes)} KB, ${kb(gzipped)} KB gzipped (budget 150 KB)`)
      for (const chunk of chunks) console.log(`build:   chunk ${chunk.file} ${kb(chunk.bytes)} KB, ${kb(chunk.gzipped)} KB gzipped`)
    }
  }
]

const main = async () => {
  await rm(dist, { recursive: true, force: true })
  await mkdir(dist, { recursive: true })
  for (const step of steps) {
    const started = performance.now()
    await step.run()
    console.log(`build: ${step.name} (${Math.round(performance.now() - started)} ms)`)
  }
}

await main()

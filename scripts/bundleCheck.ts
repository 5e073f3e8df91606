/** Checks of the bundle that `npm run build` makes after esbuild, before anything runs it. */
import type { Metafile } from "esbuild"

/**
 * Our own modules that load a bundled CommonJS package with `import()`. In the
 * bundle such a package becomes a chunk with only a default export, so every
 * named export read from it is undefined at run time (it works from the sources,
 * where Node finds the names). Load a module of ours that imports the package
 * statically instead (see `layers/mailer/Smtp.ts`).
 */
export const lazyCommonJs = (metafile: Metafile): Array<string> =>
  Object.entries(metafile.inputs).flatMap(([file, input]) =>
    // a package's own file, also where node_modules is a symlink (worktrees): esbuild names the real path then,
    // e.g. `../main/node_modules/...`
    /(^|\/)node_modules\//.test(file)
      ? []
      : input.imports
          .filter((i) => i.kind === "dynamic-import" && !i.external && metafile.inputs[i.path]?.format === "cjs")
          .map((i) => `  ${file} loads the CommonJS module ${i.original ?? i.path} with import()`)
  )

/**
 * Each chunk of the bundle with the source files it holds, for `scripts/distLoads.mjs`; a chunk made for an
 * `import()` names the imported file first (its code may sit in a shared chunk, this one only re-exporting it).
 */
export const chunkInputs = (metafile: Metafile): Record<string, ReadonlyArray<string>> =>
  Object.fromEntries(
    Object.entries(metafile.outputs)
      .filter(([file]) => /(^|\/)chunk-[^/]+\.mjs$/.test(file))
      .map(([file, output]) => [
        file.split("/").pop()!,
        [...new Set([...(output.entryPoint === undefined ? [] : [output.entryPoint]), ...Object.keys(output.inputs)])]
      ])
  )

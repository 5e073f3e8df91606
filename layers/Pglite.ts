/**
 * Opening the embedded PostgreSQL: PGlite with pgvector. Reached only through
 * `import()`, so that with `DATABASE_URL` set neither its code nor its wasm is
 * loaded, and so that `main.ts` can start an open before the rest of the
 * service is loaded: the wasm compiles and the data files are read on other
 * threads while the service's modules evaluate on this one.
 */
import { PGlite, types } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { existsSync } from "node:fs"
import { mkdir, readFile } from "node:fs/promises"
import { join } from "node:path"

const options = {
  extensions: { vector },
  // PostgreSQL's default 128 MB of shared buffers lives in the WASM heap and
  // is most of PGlite's resident memory (an idle service: ~315 MB of PGlite
  // alone, ~170 MB with 16 MB); one embedded session does not need more, and
  // the data files stay in the operating system's page cache.
  startParams: [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"],
  // node-postgres returns int8 (count(*), bigint columns) as strings;
  // PGlite would return number/bigint. Keep both drivers identical.
  parsers: { [types.INT8]: (value: string) => value },
  serializers: { [types.INT8]: (value: unknown) => String(value) }
}

/**
 * The template's bytes when `dataDir` holds no database yet: PGlite then
 * unpacks an initialised, migrated database (about 1 s) instead of running
 * initdb (about 4 s). A missing template file means a plain first start.
 */
const templateFor = async (dataDir: string, template: string | undefined): Promise<Blob | undefined> => {
  if (template === undefined || existsSync(join(dataDir, "PG_VERSION"))) return undefined
  const bytes = await readFile(template).catch(() => undefined)
  return bytes === undefined ? undefined : new Blob([bytes])
}

/**
 * A PGlite session on `dataDir` (`undefined`: in memory); an empty `dataDir`
 * starts from `template`, a `pgliteTemplate` tarball, when there is one.
 */
export const openPglite = async (dataDir: string | undefined, template?: string): Promise<PGlite> => {
  if (dataDir === undefined) return await PGlite.create({ ...options })
  await mkdir(dataDir, { recursive: true })
  const loadDataDir = await templateFor(dataDir, template)
  return await PGlite.create({ ...options, dataDir, ...(loadDataDir ? { loadDataDir } : {}) })
}

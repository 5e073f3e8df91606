/**
 * Opening the embedded PostgreSQL: PGlite with pgvector. Reached only through
 * `import()` (with `DATABASE_URL` set neither its code nor its wasm is
 * loaded): in the service, on the database's own thread (`Worker.ts`),
 * which `main.ts` starts before the rest of the service loads; in tests and
 * the build, in the calling thread.
 */
import { PGlite, types } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { existsSync } from "node:fs"
import { copyFile, mkdir, readdir, rename, rm, rmdir, stat } from "node:fs/promises"
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
 * Files copied at once. Creating a file costs far more than its bytes on the
 * disks this runs on (about a millisecond each, and a template holds about
 * 1,200), so the copies run side by side on libuv's thread pool, while the
 * main thread evaluates the service's modules.
 */
const copiesAtOnce = 16

/** The file PostgreSQL, and `openPglite`, take as the sign of a database in a data dir. */
const marker = "PG_VERSION"

/**
 * Copies the directory tree `source` into `target` (created), keeping the
 * modes of its folders and files. `PG_VERSION`, what marks a data dir as a
 * database, comes last: a copy cut short is never taken for a whole one.
 */
const copyTree = async (source: string, target: string): Promise<void> => {
  const files: Array<string> = []
  const walk = async (path: string): Promise<void> => {
    await mkdir(join(target, path), { recursive: true, mode: (await stat(join(source, path))).mode & 0o777 })
    for (const entry of await readdir(join(source, path), { withFileTypes: true })) {
      const child = join(path, entry.name)
      if (entry.isDirectory()) await walk(child)
      else if (!entry.isFile()) throw new Error(`template entry neither a folder nor a file: ${child}`)
      else if (child !== marker) files.push(child)
    }
  }
  await walk("")
  let next = 0
  const copier = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++]!
      // copies the mode too (copy_file_range where the kernel has it)
      await copyFile(join(source, file), join(target, file))
    }
  }
  await Promise.all(Array.from({ length: copiesAtOnce }, copier))
  if (existsSync(join(source, marker))) await copyFile(join(source, marker), join(target, marker))
}

/**
 * Gives a `dataDir` without a database the template's. Into an empty one
 * (the usual first start): copied beside it and renamed into place, so a
 * start killed half-way leaves no half database that the next start would
 * take for a whole one. Into one that holds other files: copied in place.
 */
const copyTemplate = async (dataDir: string, template: string): Promise<void> => {
  if ((await readdir(dataDir)).length > 0) return await copyTree(template, dataDir)
  const partial = `${dataDir}.unpacking`
  await rm(partial, { recursive: true, force: true })
  try {
    await copyTree(template, partial)
    await rmdir(dataDir)
    await rename(partial, dataDir)
  } finally {
    await rm(partial, { recursive: true, force: true })
  }
}

/**
 * A PGlite session on `dataDir` (`undefined`: in memory); a `dataDir` without
 * a database starts from `template`, a `writePgliteTemplate` directory, when
 * there is one, and opens as an existing database instead of running PGlite's
 * initdb (about 4 s).
 */
export const openPglite = async (dataDir: string | undefined, template?: string): Promise<PGlite> => {
  if (dataDir !== undefined) {
    await mkdir(dataDir, { recursive: true })
    if (template !== undefined && existsSync(join(template, marker)) && !existsSync(join(dataDir, marker))) {
      await copyTemplate(dataDir, template)
    }
  }
  const db = await PGlite.create(dataDir === undefined ? { ...options } : { ...options, dataDir })
  await enableVector(db)
  return db
}

/**
 * pgvector is bundled, so every embedded database has it: installed here by a
 * database's first open (the template has it already), which lets the service
 * know it without a statement of its own (`layerPglite`).
 */
const enableVector = async (db: PGlite): Promise<void> => {
  const installed = await db.query("select 1 from pg_extension where extname = 'vector'")
  if (installed.rows.length === 0) await db.exec("create extension if not exists vector")
}

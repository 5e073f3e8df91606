/**
 * Opening the embedded PostgreSQL: PGlite with pgvector. Reached only through
 * `import()`, so that with `DATABASE_URL` set neither its code nor its wasm is
 * loaded, and so that `main.ts` can start an open before the rest of the
 * service is loaded: the wasm compiles and the data files are read on other
 * threads while the service's modules evaluate on this one.
 */
import { PGlite, types } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { createReadStream, existsSync } from "node:fs"
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, rmdir } from "node:fs/promises"
import { dirname, join } from "node:path"
import { createGunzip } from "node:zlib"

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

/** A NUL-terminated text field of a tar header. */
const field = (header: Buffer, start: number, length: number): string => {
  const bytes = header.subarray(start, start + length)
  const end = bytes.indexOf(0)
  return bytes.subarray(0, end === -1 ? length : end).toString("utf8")
}
const octal = (header: Buffer, start: number, length: number): number => parseInt(field(header, start, length).trim() || "0", 8)

/**
 * Unpacks a gzip ustar archive (`dumpDataDir`'s format: directories and
 * regular files) into `target`, streaming: gunzip runs on the thread pool and
 * no more than a chunk is held at once. PGlite's own `loadDataDir` holds the
 * whole unpacked database in memory, which an idle service then keeps as
 * ~100 MB of resident memory.
 */
const unpack = async (archive: string, target: string): Promise<void> => {
  let buffered: Buffer = Buffer.alloc(0)
  // the entry being written: bytes of data still to come, then padding to the 512-byte block
  let entry: { handle: FileHandle; left: number; padding: number } | undefined
  const made = new Set<string>()
  let ended = false
  try {
    for await (const chunk of createReadStream(archive).pipe(createGunzip())) {
      buffered = buffered.length === 0 ? (chunk as Buffer) : Buffer.concat([buffered, chunk as Buffer])
      while (!ended) {
        if (entry !== undefined) {
          const data = buffered.subarray(0, Math.min(entry.left, buffered.length))
          if (data.length > 0) await entry.handle.write(data)
          entry.left -= data.length
          buffered = buffered.subarray(data.length)
          if (entry.left > 0) break
          const skipped = Math.min(entry.padding, buffered.length)
          entry.padding -= skipped
          buffered = buffered.subarray(skipped)
          if (entry.padding > 0) break
          await entry.handle.close()
          entry = undefined
        }
        if (buffered.length < 512) break
        const header = buffered.subarray(0, 512)
        buffered = buffered.subarray(512)
        if (header.every((byte) => byte === 0)) {
          ended = true
          break
        }
        const prefix = field(header, 345, 155)
        const name = `${prefix === "" ? "" : `${prefix}/`}${field(header, 0, 100)}`.replace(/^\/+/, "")
        if (name.split("/").includes("..")) throw new Error(`template entry outside the data dir: ${name}`)
        const type = field(header, 156, 1)
        const path = join(target, name)
        const mode = octal(header, 100, 8) & 0o777
        if (type === "5") {
          await mkdir(path, { recursive: true, mode })
          made.add(path)
        } else if (type === "0" || type === "") {
          const size = octal(header, 124, 12)
          if (!made.has(dirname(path))) {
            await mkdir(dirname(path), { recursive: true })
            made.add(dirname(path))
          }
          const handle = await open(path, "w", mode)
          entry = { handle, left: size, padding: (512 - (size % 512)) % 512 }
        } else {
          throw new Error(`template entry of an unsupported type ${JSON.stringify(type)}: ${name}`)
        }
      }
    }
    if (entry !== undefined) throw new Error("the template archive ends inside a file")
  } finally {
    await entry?.handle.close()
  }
}

/**
 * Gives an empty `dataDir` the template's database. Unpacked beside it and
 * renamed into place, so a start killed half-way leaves no half database that
 * the next start would take for a whole one. `false`: not done because
 * `dataDir` holds files that are not a database (PGlite's own way then).
 */
const unpackTemplate = async (dataDir: string, template: string): Promise<boolean> => {
  if ((await readdir(dataDir)).length > 0) return false
  const partial = `${dataDir}.unpacking`
  await rm(partial, { recursive: true, force: true })
  try {
    await unpack(template, partial)
    await rmdir(dataDir)
    await rename(partial, dataDir)
    return true
  } finally {
    await rm(partial, { recursive: true, force: true })
  }
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
  const unpacked =
    template !== undefined &&
    existsSync(template) &&
    !existsSync(join(dataDir, "PG_VERSION")) &&
    (await unpackTemplate(dataDir, template))
  const loadDataDir = unpacked ? undefined : await templateFor(dataDir, template)
  return await PGlite.create({ ...options, dataDir, ...(loadDataDir ? { loadDataDir } : {}) })
}

/** Files: declare, upload the bytes (checked by their magic bytes), confirm, read, delete. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallerShape } from "../../schema/Auth.js"
import {
  FileNotUploaded,
  ParameterInvalid,
  PayloadTooLarge,
  ResourceMissing,
  UnsupportedMediaType
} from "../../schema/Errors.js"
import { type CreateFile, type File, MAX_FILE_BYTES } from "../../schema/Files.js"
import { FileId } from "../../schema/Ids.js"
import { FileStorage } from "../../layers/FileStorage.js"
import { type Tenant, tenantOf } from "../../schema/Tenant.js"
import { AppConfig } from "../Config.js"
import { mint } from "../Mint.js"
import { iso, isoOrNull, now } from "../Time.js"
import { FilesRepo, type FileRow } from "./FilesRepo.js"
import { detect, matches } from "./Magic.js"


export class Files extends Effect.Service<Files>()("Files/Files", {
  effect: Effect.gen(function* () {
    const repo = yield* FilesRepo
    const storage = yield* FileStorage
    const config = yield* AppConfig

    const toFile = (row: FileRow): File => ({
      id: row.id,
      object: "file",
      filename: row.filename,
      content_type: row.content_type,
      size_bytes: row.size_bytes,
      status: row.status,
      received: row.received,
      upload_url: `${config.publicUrl}/v1/files/${row.id}/content`,
      created_at: iso(row.created_at),
      uploaded_at: isoOrNull(row.uploaded_at)
    })

    const found = (tenant: Tenant, id: FileId) =>
      Effect.flatMap(repo.find(tenant, id), (row) =>
        Option.match(row, {
          onNone: () => Effect.fail(new ResourceMissing({ message: `No such file: '${id}'`, param: "id" })),
          onSome: Effect.succeed
        })
      )

    const create = Effect.fn("Files.create")(function* (caller: CallerShape, input: CreateFile) {
      if (input.size_bytes > MAX_FILE_BYTES) {
        return yield* new PayloadTooLarge({
          message: `Files may be at most ${MAX_FILE_BYTES} bytes (25 MB)`,
          param: "size_bytes"
        })
      }
      const id = yield* mint(FileId, "file")
      const row = yield* repo.insert(tenantOf(caller), {
        id,
        filename: input.filename,
        content_type: input.content_type,
        size_bytes: input.size_bytes,
        created_at: yield* now
      })
      return toFile(row)
    })

    const upload = Effect.fn("Files.upload")(function* (caller: CallerShape, id: FileId, bytes: Uint8Array) {
      const tenant = tenantOf(caller)
      const row = yield* found(tenant, id)
      if (row.status === "uploaded") {
        return yield* new ParameterInvalid({ message: `File '${id}' is already confirmed; create a new file`, param: "id" })
      }
      if (bytes.length === 0) return yield* new ParameterInvalid({ message: "The body is empty", param: "body" })
      const kind = detect(bytes)
      if (!matches(row.content_type, kind)) {
        return yield* new UnsupportedMediaType({
          message: `The bytes are not ${row.content_type} (they look like ${kind ?? "unknown binary data"})`,
          param: "body"
        })
      }
      yield* storage.put(id, bytes)
      return toFile(yield* repo.markReceived(id, bytes.length, yield* now))
    })

    const confirm = Effect.fn("Files.confirm")(function* (caller: CallerShape, id: FileId) {
      const row = yield* found(tenantOf(caller), id)
      if (!row.received) {
        return yield* new FileNotUploaded({ message: `No bytes were uploaded for file '${id}'; PUT them to its upload_url` })
      }
      return toFile(row.status === "uploaded" ? row : yield* repo.markUploaded(id, yield* now))
    })

    const retrieve = Effect.fn("Files.retrieve")(function* (caller: CallerShape, id: FileId) {
      return toFile(yield* found(tenantOf(caller), id))
    })

    const remove = Effect.fn("Files.delete")(function* (caller: CallerShape, id: FileId) {
      yield* found(tenantOf(caller), id)
      yield* repo.softDelete(id, yield* now)
      yield* storage.remove(id)
      return { id, object: "file" as const, deleted: true as const }
    })

    /** The bytes of an uploaded file, for the pipeline. */
    const bytesOf = (tenant: Tenant, id: FileId) =>
      Effect.flatMap(repo.find(tenant, id), (row) =>
        Option.isSome(row) && row.value.status === "uploaded"
          ? Effect.map(storage.get(id), Option.map((bytes) => ({ row: row.value, bytes })))
          : Effect.succeed(Option.none())
      )

    return { create, upload, confirm, retrieve, remove, bytesOf, find: repo.find } as const
  }),
  dependencies: [FilesRepo.Default]
}) {}

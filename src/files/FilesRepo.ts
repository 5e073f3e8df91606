/** SQL for uploaded files' records (the bytes live in `FileStorage`). Scoped to one workspace and environment. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { FileContentType, FileStatus } from "../../schema/Files.js"
import { FileId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeOne, decodeSingle, execute } from "../db/Sql.js"

export const FileRow = Schema.Struct({
  id: FileId,
  filename: Schema.String,
  content_type: FileContentType,
  size_bytes: Schema.NumberFromString,
  status: FileStatus,
  received: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  uploaded_at: Schema.NullOr(Schema.DateFromSelf)
})
export type FileRow = typeof FileRow.Type

const columns = "id, filename, content_type, size_bytes::text as size_bytes, status, received, created_at, uploaded_at"

/** Where a file's bytes are kept in `FileStorage`. */
export const storageKey = (tenant: Tenant, id: FileId) => `${tenant.workspaceId}/${tenant.environment}/${id}`

export class FilesRepo extends Effect.Service<FilesRepo>()("Files/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const insert = (tenant: Tenant, row: Omit<FileRow, "status" | "received" | "uploaded_at">): Effect.Effect<FileRow> =>
      decodeSingle(FileRow, sql`
        insert into files ${sql.insert({
          id: row.id,
          workspace_id: tenant.workspaceId,
          environment: tenant.environment,
          filename: row.filename,
          content_type: row.content_type,
          size_bytes: row.size_bytes,
          status: "pending",
          received: false,
          created_at: row.created_at,
          updated_at: row.created_at
        })}
        returning ${cols}`)

    const find = (tenant: Tenant, id: FileId): Effect.Effect<Option.Option<FileRow>> =>
      decodeOne(FileRow, sql`
        select ${cols} from files
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null`)

    const markReceived = (id: FileId, size: number, at: Date): Effect.Effect<FileRow> =>
      decodeSingle(FileRow, sql`
        update files set received = true, size_bytes = ${size}, updated_at = ${at}
        where id = ${id} returning ${cols}`)

    const markUploaded = (id: FileId, at: Date): Effect.Effect<FileRow> =>
      decodeSingle(FileRow, sql`
        update files set status = 'uploaded', uploaded_at = coalesce(uploaded_at, ${at}), updated_at = ${at}
        where id = ${id} returning ${cols}`)

    const softDelete = (id: FileId, at: Date): Effect.Effect<void> =>
      execute(sql`update files set deleted_at = ${at}, updated_at = ${at} where id = ${id}`)

    return { insert, find, markReceived, markUploaded, softDelete } as const
  })
}) {}

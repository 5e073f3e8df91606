/**
 * Files: bytes uploaded for knowledge ingestion. Declared with `POST /v1/files`,
 * sent raw to `upload_url` (`PUT /v1/files/{id}/content`, at most 25 MB, type
 * checked by magic bytes), then confirmed; a `file_id` source reads them.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, Timestamp } from "./Envelope.js"
import { UploadBody } from "./Endpoint.js"
import {
  ApiError,
  FileNotUploaded,
  ParameterInvalid,
  PayloadTooLarge,
  ResourceMissing,
  UnsupportedMediaType
} from "./Errors.js"
import { FileId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Largest upload: 25 MB, counted while the bytes stream in. */
export const MAX_FILE_BYTES = 25 * 1024 * 1024

export const FileContentType = Schema.Literal(
  "image/png",
  "image/jpeg",
  "image/webp",
  "application/pdf",
  "text/plain",
  "text/markdown",
  "text/html",
  "audio/mpeg",
  "audio/wav",
  "audio/mp4",
  "audio/ogg"
).annotations({
  description:
    "Images go through OCR; text, Markdown, PDF and HTML are read directly; audio (MP3, WAV, M4A, OGG, up to 10 minutes) is transcribed"
})
export type FileContentType = typeof FileContentType.Type
export const FileContentTypes: ReadonlyArray<FileContentType> = FileContentType.literals

export const FileStatus = Schema.Literal("pending", "uploaded").annotations({
  description: "`pending` until `confirm` after the bytes arrived; then `uploaded`"
})
export type FileStatus = typeof FileStatus.Type

export const File = Schema.Struct({
  id: FileId,
  object: Schema.Literal("file"),
  filename: Schema.String,
  content_type: FileContentType.annotations({ description: "Declared at creation; the upload's bytes must match it" }),
  size_bytes: Schema.Int.annotations({ description: "Declared size until the bytes arrive; then the real size" }),
  status: FileStatus,
  received: Schema.Boolean.annotations({ description: "Whether bytes were uploaded (confirm needs them)" }),
  upload_url: Schema.String.annotations({ description: "`PUT` the raw bytes here" }),
  created_at: Timestamp,
  uploaded_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "File" })
export type File = typeof File.Type

export const CreateFile = StrictStruct({
  filename: Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "filename must not be empty" }),
    Schema.maxLength(255, { message: () => "filename must be at most 255 characters" })
  ),
  content_type: FileContentType,
  size_bytes: Schema.Int.pipe(
    Schema.greaterThanOrEqualTo(1, { message: () => "size_bytes must be at least 1" })
  ).annotations({ description: `At most ${MAX_FILE_BYTES} (25 MB); more is \`413 payload_too_large\`` })
}).annotations({ identifier: "CreateFile" })
export type CreateFile = typeof CreateFile.Type

const id = HttpApiSchema.param("id", FileId)
const missing = ApiError(ResourceMissing)


export class FilesGroup extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("create", "/v1/files")
      .setPayload(CreateFile)
      .addSuccess(Envelope(File), { status: 201 })
      .addError(ApiError(PayloadTooLarge))
      .annotate(RequiredScope, "write:files")
      .annotate(
        OpenApi.Description,
        "Body `filename`, `content_type` (`image/png`, `image/jpeg`, `image/webp`, `application/pdf`, " +
          "`text/plain`, `text/markdown`, `text/html`, `audio/mpeg`, `audio/wav`, `audio/mp4`, `audio/ogg`), " +
          "`size_bytes` (at most 25 MB, else `413`); `201`; returns `upload_url`"
      )
      .annotate(OpenApi.Summary, "Declare a file; returns the `upload_url` for its bytes")
  )
  .add(
    HttpApiEndpoint.put("upload")`/v1/files/${id}/content`
      .setPayload(HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" }))
      .annotate(UploadBody, {
        maxBytes: MAX_FILE_BYTES,
        mediaType: /^(application\/octet-stream|application\/pdf|image\/(png|jpeg|webp)|audio\/(mpeg|wav|mp4|ogg)|text\/[a-z0-9.+-]+)\s*(;|$)/i,
        mediaTypeNames: "application/octet-stream, image/*, audio/*, application/pdf or text/*"
      })
      .addSuccess(Envelope(File))
      .addError(missing)
      .addError(ApiError(PayloadTooLarge))
      .addError(ApiError(UnsupportedMediaType))
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:files")
      .annotate(
        OpenApi.Description,
        "The raw bytes, `Content-Type` one of `application/octet-stream`, `image/png|jpeg|webp`, " +
          "`audio/mpeg|wav|mp4|ogg`, `application/pdf`, `text/*` (else `415`); at most 25 MB, counted while they " +
          "stream in (`413`; the 2 MB JSON cap does not apply here). The bytes must be of the declared type " +
          "(checked by their magic bytes), else `415`. May be repeated until the file is confirmed."
      )
      .annotate(OpenApi.Summary, "Upload the file's bytes")
  )
  .add(
    HttpApiEndpoint.post("confirm")`/v1/files/${id}/confirm`
      .addSuccess(Envelope(File))
      .addError(missing)
      .addError(ApiError(FileNotUploaded))
      .annotate(RequiredScope, "write:files")
      .annotate(
        OpenApi.Description,
        "Sets `status` `uploaded`; `409 file_not_uploaded` when no bytes arrived; idempotent"
      )
      .annotate(OpenApi.Summary, "Mark the file `uploaded` once its bytes are in; idempotent")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/files/${id}`
      .addSuccess(Envelope(File))
      .addError(missing)
      .annotate(RequiredScope, "read:files")
      .annotate(
        OpenApi.Description,
        "`id`, `filename`, `content_type`, `size_bytes`, `status` (`pending`, `uploaded`), `received`, " +
          "`upload_url`, `created_at`, `uploaded_at`"
      )
      .annotate(OpenApi.Summary, "Retrieve a file")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/files/${id}`
      .addSuccess(Envelope(Deleted(FileId, "file")))
      .addError(missing)
      .annotate(RequiredScope, "write:files")
      .annotate(OpenApi.Description, "Deletes the record and the bytes; sources already indexed from it stay")
      .annotate(OpenApi.Summary, "Delete a file and its bytes (sources already indexed from it stay)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("files"))
  .annotate(OpenApi.Title, "Files") {}

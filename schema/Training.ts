/**
 * Training agents: an explicit hierarchy of modules (`mod_`), their lessons
 * (`lsn_`) and the lessons' sources (`lsrc_`). Each level is ordered by a dense
 * 0-based `position` within its parent. Lesson sources go through the knowledge
 * pipeline and carry its progress fields.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, Timestamp } from "./Envelope.js"
import {
  AgentTypeMismatch,
  ApiError,
  FileNotUploaded,
  HasChildren,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  ResourceMissing,
  UrlNotAllowed
} from "./Errors.js"
import { AgentId, FileId, LessonId, LessonSourceId, ModuleId } from "./Ids.js"
import { SourceErrorCode, SourcePhase, SourceStatus } from "./Knowledge.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Children per parent: modules per agent, lessons per module, sources per lesson. */
export const MAX_MODULES = 100
export const MAX_LESSONS = 100
export const MAX_LESSON_SOURCES = 20

const Title = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "title must not be empty" }),
  Schema.maxLength(200, { message: () => "title must be at most 200 characters" })
)
const Description = Schema.Trim.pipe(Schema.maxLength(2_000, { message: () => "description must be at most 2000 characters" }))
const LessonContent = Schema.String.pipe(
  Schema.maxLength(100_000, { message: () => "content must be at most 100000 characters" })
)
const Position = Schema.Int.pipe(
  Schema.between(0, 999, { message: () => "position must be an integer from 0 to 999" })
).annotations({ description: "0-based place among its siblings; one past the end (or more) puts it last" })

export const Module = Schema.Struct({
  id: ModuleId,
  object: Schema.Literal("module"),
  agent_id: AgentId,
  title: Schema.String,
  description: Schema.String,
  position: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Module" })
export type Module = typeof Module.Type

export const CreateModule = StrictStruct({
  title: Title,
  description: Schema.optional(Description).annotations({ description: "Default: empty" }),
  position: Schema.optional(Position).annotations({ description: "Default: last" })
}).annotations({ identifier: "CreateModule" })
export type CreateModule = typeof CreateModule.Type

export const UpdateModule = StrictStruct({
  title: Schema.optional(Title),
  description: Schema.optional(Description),
  position: Schema.optional(Position).annotations({ description: "Moves it; its siblings close up around it" })
}).annotations({ identifier: "UpdateModule" })
export type UpdateModule = typeof UpdateModule.Type

export const Lesson = Schema.Struct({
  id: LessonId,
  object: Schema.Literal("lesson"),
  agent_id: AgentId,
  module_id: ModuleId,
  title: Schema.String,
  content: Schema.String,
  position: Schema.Int.annotations({ description: "0-based, within its module" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Lesson" })
export type Lesson = typeof Lesson.Type

export const CreateLesson = StrictStruct({
  module_id: ModuleId,
  title: Title,
  content: Schema.optional(LessonContent).annotations({ description: "The lesson's own text; default empty" }),
  position: Schema.optional(Position).annotations({ description: "Default: last in its module" })
}).annotations({ identifier: "CreateLesson" })
export type CreateLesson = typeof CreateLesson.Type

export const UpdateLesson = StrictStruct({
  module_id: Schema.optional(ModuleId).annotations({ description: "Moves it to another module of the agent (last, or at `position`)" }),
  title: Schema.optional(Title),
  content: Schema.optional(LessonContent),
  position: Schema.optional(Position)
}).annotations({ identifier: "UpdateLesson" })
export type UpdateLesson = typeof UpdateLesson.Type

export const LessonSourceType = Schema.Literal("text", "url", "file_id", "audio")
export type LessonSourceType = typeof LessonSourceType.Type

export const LessonSource = Schema.Struct({
  id: LessonSourceId,
  object: Schema.Literal("lesson_source"),
  agent_id: AgentId,
  lesson_id: LessonId,
  type: LessonSourceType,
  title: Schema.String,
  is_primary: Schema.Boolean.annotations({
    description: "True on the first source ever added to the lesson; no operation changes it"
  }),
  position: Schema.Int.annotations({ description: "0-based, within its lesson" }),
  status: SourceStatus.annotations({ description: "`pending` → `processing` → `indexed` or `failed`, as knowledge sources" }),
  phase: SourcePhase.annotations({ description: "The step running, as for knowledge sources" }),
  progress: Schema.Int.annotations({ description: "0 to 100" }),
  attempts: Schema.Int,
  next_attempt_at: Schema.NullOr(Timestamp),
  error: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(SourceErrorCode),
  source_ref: Schema.String.annotations({ description: "The URL, the file id (also of `audio`), or `inline` for text" }),
  size_bytes: Schema.Int,
  chunk_count: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "LessonSource" })
export type LessonSource = typeof LessonSource.Type

export const CreateLessonSource = StrictStruct({
  lesson_id: LessonId,
  type: LessonSourceType,
  title: Schema.optional(Schema.Trim.pipe(Schema.maxLength(500, { message: () => "title must be at most 500 characters" }))).annotations({
    description: "`text`: required; otherwise optional"
  }),
  content: Schema.optional(Schema.String).annotations({ description: "`text`: the document (1 MB)" }),
  url: Schema.optional(Schema.String).annotations({ description: "`url`: http(s) page, text or PDF" }),
  file_id: Schema.optional(FileId).annotations({
    description: "`file_id`: an `uploaded` file; `audio`: an uploaded MP3, WAV, M4A or OGG file of at most 10 minutes"
  }),
  transcript: Schema.optional(
    Schema.String.pipe(Schema.maxLength(1_000_000, { message: () => "transcript must be at most 1000000 characters" }))
  ).annotations({
    description: "`audio` only: the spoken text, used instead of a transcription (needed with the `local` AI provider)"
  }),
  position: Schema.optional(Position).annotations({ description: "Default: last in its lesson" })
}).annotations({ identifier: "CreateLessonSource" })
export type CreateLessonSource = typeof CreateLessonSource.Type

/**
 * `is_primary` is named so that a PATCH sending it gets a clear refusal naming
 * it (it never changes), instead of an unknown-field error.
 */
export const UpdateLessonSource = StrictStruct({
  title: Schema.optional(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(500))),
  position: Schema.optional(Position),
  is_primary: Schema.optional(Schema.Unknown).annotations({ description: "Never accepted: `is_primary` cannot change" })
}).annotations({ identifier: "UpdateLessonSource" })
export type UpdateLessonSource = typeof UpdateLessonSource.Type

export const CascadeParams = Schema.Struct({
  cascade: Schema.optional(Schema.Literal("true", "false")).annotations({
    description: "`true` deletes the children too; without it a parent with children answers 409"
  })
})
export type CascadeParams = typeof CascadeParams.Type

export const LessonListParams = Schema.Struct({ module_id: ModuleId })
export const SourceListParams = Schema.Struct({ lesson_id: LessonId })

const agentPath = HttpApiSchema.param("id", AgentId)
const modulePath = HttpApiSchema.param("module_id", ModuleId)
const lessonPath = HttpApiSchema.param("lesson_id", LessonId)
const sourcePath = HttpApiSchema.param("source_id", LessonSourceId)
const missing = ApiError(ResourceMissing)
const mismatch = ApiError(AgentTypeMismatch)


export class TrainingGroup extends HttpApiGroup.make("training")
  .add(
    HttpApiEndpoint.post("createModule")`/v1/agents/${agentPath}/modules`
      .setPayload(CreateModule)
      .addSuccess(Envelope(Module), { status: 201 })
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `title` (1–200), optional `description` (default empty), `position` (0–999; default last; past " +
          "the end: last); `201`; at most 100 modules (`400 parameter_invalid`)"
      )
      .annotate(OpenApi.Summary, "Add a module to a training agent, last or at `position`")
  )
  .add(
    HttpApiEndpoint.get("listModules")`/v1/agents/${agentPath}/modules`
      .addSuccess(ListEnvelope(Module))
      .addError(missing)
      .addError(mismatch)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Description, "Every module, in `position` order (one page)")
      .annotate(OpenApi.Summary, "Every module of the agent, in position order (one page)")
  )
  .add(
    HttpApiEndpoint.patch("updateModule")`/v1/agents/${agentPath}/modules/${modulePath}`
      .setPayload(UpdateModule)
      .addSuccess(Envelope(Module))
      .addError(missing)
      .addError(mismatch)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Description, "`title`, `description`, `position` (moves it; the others close up)")
      .annotate(OpenApi.Summary, "Retitle, describe or move a module")
  )
  .add(
    HttpApiEndpoint.del("deleteModule")`/v1/agents/${agentPath}/modules/${modulePath}`
      .setUrlParams(CascadeParams)
      .addSuccess(Envelope(Deleted(ModuleId, "module")))
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(HasChildren))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "`409 resource_has_children` while it has lessons, unless `?cascade=true`: then its lessons and their " +
          "sources (with their chunks and Q&A) go too"
      )
      .annotate(OpenApi.Summary, "Delete a module; one with lessons only with `?cascade=true` (its lessons and sources go too)")
  )
  .add(
    HttpApiEndpoint.post("createLesson")`/v1/agents/${agentPath}/lessons`
      .setPayload(CreateLesson)
      .addSuccess(Envelope(Lesson), { status: 201 })
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `module_id`, `title` (1–200), optional `content` (the lesson's own text, up to 100,000 " +
          "characters), `position`; `201`; at most 100 lessons per module"
      )
      .annotate(OpenApi.Summary, "Add a lesson to a module, last or at `position`")
  )
  .add(
    HttpApiEndpoint.get("listLessons")`/v1/agents/${agentPath}/lessons`
      .setUrlParams(LessonListParams)
      .addSuccess(ListEnvelope(Lesson))
      .addError(missing)
      .addError(mismatch)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Summary, "The lessons of one module (`module_id`), in position order (one page)")
  )
  .add(
    HttpApiEndpoint.patch("updateLesson")`/v1/agents/${agentPath}/lessons/${lessonPath}`
      .setPayload(UpdateLesson)
      .addSuccess(Envelope(Lesson))
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "`title`, `content`, `position`, `module_id` (moves it to another module of the agent: last, or at " +
          "`position`)"
      )
      .annotate(OpenApi.Summary, "Retitle, rewrite, move within its module or to another module")
  )
  .add(
    HttpApiEndpoint.del("deleteLesson")`/v1/agents/${agentPath}/lessons/${lessonPath}`
      .setUrlParams(CascadeParams)
      .addSuccess(Envelope(Deleted(LessonId, "lesson")))
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(HasChildren))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Description, "`409 resource_has_children` while it has sources, unless `?cascade=true`")
      .annotate(OpenApi.Summary, "Delete a lesson; one with sources only with `?cascade=true` (its sources go too)")
  )
  .add(
    HttpApiEndpoint.post("createSource")`/v1/agents/${agentPath}/sources`
      .setPayload(CreateLessonSource)
      .addSuccess(Envelope(LessonSource), { status: 201 })
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ParameterMissing))
      .addError(ApiError(UrlNotAllowed))
      .addError(ApiError(FileNotUploaded))
      .addError(ApiError(PayloadTooLarge))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `lesson_id`, `type` and, by type: `text`: `title`, `content` (1 MB); `url`: `url`; `file_id`: " +
          "`file_id`; `audio`: `file_id` of an uploaded MP3, WAV, M4A or OGG file, optional `transcript`. " +
          "Optional `title`, `position`. Checked like a knowledge source (`parameter_missing`, " +
          "`url_not_allowed`, `409 file_not_uploaded`, `413`); `201`, the source `pending`; at most 20 per " +
          "lesson"
      )
      .annotate(
        OpenApi.Summary,
        "Add a source to a lesson; indexed in the background, then `course.lesson.source.indexed` or `.failed`"
      )
  )
  .add(
    HttpApiEndpoint.get("listSources")`/v1/agents/${agentPath}/sources`
      .setUrlParams(SourceListParams)
      .addSuccess(ListEnvelope(LessonSource))
      .addError(missing)
      .addError(mismatch)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(
        OpenApi.Description,
        "The sources of one lesson (`lesson_id` required), in `position` order, with their progress (one " +
          "page)"
      )
      .annotate(OpenApi.Summary, "The sources of one lesson (`lesson_id`), in position order, with their progress (one page)")
  )
  .add(
    HttpApiEndpoint.patch("updateSource")`/v1/agents/${agentPath}/sources/${sourcePath}`
      .setPayload(UpdateLessonSource)
      .addSuccess(Envelope(LessonSource))
      .addError(missing)
      .addError(mismatch)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "`title`, `position`; `is_primary` is refused (`400 parameter_invalid`, `param: is_primary`)"
      )
      .annotate(OpenApi.Summary, "Retitle or move a lesson source (`is_primary` never changes)")
  )
  .add(
    HttpApiEndpoint.del("deleteSource")`/v1/agents/${agentPath}/sources/${sourcePath}`
      .addSuccess(Envelope(Deleted(LessonSourceId, "lesson_source")))
      .addError(missing)
      .addError(mismatch)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Removes it with its chunks and Q&A; the others close up; a primary source is not replaced"
      )
      .annotate(OpenApi.Summary, "Delete a lesson source with its chunks (a primary one is not replaced)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("training"))
  .annotate(OpenApi.Title, "Training") {}

/**
 * Lesson sources. Each owns a knowledge source row, checked and built by the
 * knowledge area (same fetch, extraction, chunking, vectors) and queued on the
 * agent's serial ingestion queue, so knowledge and lesson sources of one agent
 * run one at a time in creation order. `is_primary` is decided once, at
 * creation: true when the lesson never had a source before.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallerShape } from "../../schema/Auth.js"
import { ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import { type AgentId, type LessonId, LessonSourceId } from "../../schema/Ids.js"
import { type Tenant, tenantOf } from "../../schema/Tenant.js"
import { type CreateLessonSource, MAX_LESSON_SOURCES, type UpdateLessonSource } from "../../schema/Training.js"
import { withAfterCommit } from "../../layers/JobQueue.js"
import { Agents } from "../agents/Agents.js"
import { describeSeconds, MAX_AUDIO_SECONDS } from "../../layers/extractor/AudioDuration.js"
import { Extractor, type ExtractorShape } from "../../layers/Extractor.js"
import { Files } from "../files/Files.js"
import { detect, isAudio } from "../files/Magic.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { mint } from "../Mint.js"
import { now } from "../Time.js"
import { trainingAgent } from "./Guard.js"
import { SourceRemoval } from "./SourceRemoval.js"
import { toLessonSource, TrainingRepo } from "./TrainingRepo.js"

const noLesson = (id: string) => new ResourceMissing({ message: `No such lesson: '${id}'`, param: "lesson_id" })
/** The file is audio of a known kind, and not longer than 10 minutes when its headers tell. */
const audioCheck = (extractor: ExtractorShape, file: Option.Option<{ readonly bytes: Uint8Array }>) =>
  Effect.gen(function* () {
    if (Option.isNone(file)) return
    const kind = detect(file.value.bytes)
    if (!isAudio(kind)) {
      return yield* new ParameterInvalid({ message: "An `audio` source needs an MP3, WAV, M4A or OGG file", param: "file_id" })
    }
    // the headers are read in a decoder process: the file is untrusted
    const seconds = yield* extractor.audioSeconds(file.value.bytes, kind).pipe(
      Effect.mapError((e) => new ParameterInvalid({ message: `The audio file could not be read: ${e.message}`, param: "file_id" }))
    )
    if (Option.isSome(seconds) && seconds.value > MAX_AUDIO_SECONDS) {
      return yield* new ParameterInvalid({
        message: `The audio lasts ${describeSeconds(seconds.value)}; an audio source holds at most ${MAX_AUDIO_SECONDS / 60} minutes`,
        param: "file_id"
      })
    }
  })

const noSource = (id: string) => new ResourceMissing({ message: `No such lesson source: '${id}'`, param: "source_id" })

export class LessonSources extends Effect.Service<LessonSources>()("Training/LessonSources", {
  effect: Effect.gen(function* () {
    const repo = yield* TrainingRepo
    const agents = yield* Agents
    const knowledge = yield* Knowledge
    const removal = yield* SourceRemoval
    const files = yield* Files
    const extractor = yield* Extractor

    const lessonExists = (tenant: Tenant, agentId: AgentId, id: LessonId) =>
      Effect.flatMap(repo.findLesson(tenant, agentId, id), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(noLesson(id))
      )

    const sourceOf = (tenant: Tenant, agentId: AgentId, id: LessonSourceId) =>
      Effect.flatMap(repo.findSource(tenant, agentId, id), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(noSource(id))
      )

    /**
     * The knowledge row a lesson source owns, checked by the knowledge area. An
     * `audio` source is a `file_id` row whose file must be audio of at most 10
     * minutes (known from its headers, so refused here); its transcript rides
     * in the row's content.
     */
    const prepare = (caller: CallerShape, agentId: AgentId, input: CreateLessonSource) =>
      Effect.gen(function* () {
        const { lesson_id: _lesson, position: _position, transcript, ...fields } = input
        if (input.type !== "audio") {
          if (transcript !== undefined) {
            return yield* new ParameterInvalid({ message: "transcript is only for `audio` sources", param: "transcript" })
          }
          return yield* knowledge.prepare(caller, agentId, { ...fields, type: input.type })
        }
        const prepared = yield* knowledge.prepare(caller, agentId, { ...fields, type: "file_id" })
        // prepare refused a missing or not uploaded file already
        if (input.file_id !== undefined) yield* audioCheck(extractor, yield* files.bytesOf(tenantOf(caller), input.file_id))
        return { ...prepared, content: transcript !== undefined && transcript.trim() !== "" ? transcript : null }
      })

    const list = Effect.fn("LessonSources.list")(function* (caller: CallerShape, agentId: AgentId, lessonId: LessonId) {
      const tenant = tenantOf(caller)
      yield* trainingAgent(agents, tenant, agentId)
      yield* lessonExists(tenant, agentId, lessonId)
      return (yield* repo.lessonSources(tenant, agentId, lessonId)).map(toLessonSource)
    })

    const create = Effect.fn("LessonSources.create")(function* (
      caller: CallerShape,
      agentId: AgentId,
      input: CreateLessonSource
    ) {
      const tenant = tenantOf(caller)
      yield* trainingAgent(agents, tenant, agentId)
      yield* lessonExists(tenant, agentId, input.lesson_id)
      const id = yield* mint(LessonSourceId, "lsrc")
      const prepared = yield* prepare(caller, agentId, input)
      const wanted = input.position
      return yield* repo
        .transaction(
          Effect.gen(function* () {
            yield* repo.lock(agentId)
            yield* lessonExists(tenant, agentId, input.lesson_id)
            const siblings = yield* repo.lessonSources(tenant, agentId, input.lesson_id)
            if (siblings.length >= MAX_LESSON_SOURCES) {
              return yield* new ParameterInvalid({
                message: `A lesson has at most ${MAX_LESSON_SOURCES} sources`,
                param: "lesson_id"
              })
            }
            const before = yield* repo.countSourceAdded(input.lesson_id)
            const position = Math.min(wanted ?? siblings.length, siblings.length)
            yield* repo.shiftFrom("lesson_sources", input.lesson_id, position)
            const [row] = yield* knowledge.insertWithJobs(tenant, agentId, [{ ...prepared, lessonSourceId: id }])
            yield* repo.insertSource(
              tenant,
              agentId,
              {
                id,
                lessonId: input.lesson_id,
                knowledgeSourceId: row!.id,
                type: input.type,
                isPrimary: before === 0,
                position
              },
              prepared.at
            )
            return toLessonSource(yield* sourceOf(tenant, agentId, id))
          })
        )
        .pipe(withAfterCommit)
    })

    const update = Effect.fn("LessonSources.update")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: LessonSourceId,
      input: UpdateLessonSource
    ) {
      const tenant = tenantOf(caller)
      yield* trainingAgent(agents, tenant, agentId)
      if (input.is_primary !== undefined) {
        return yield* new ParameterInvalid({
          message: "is_primary is set on a lesson's first source and never changes",
          param: "is_primary"
        })
      }
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lock(agentId)
          const current = yield* sourceOf(tenant, agentId, id)
          const at = yield* now
          if (input.position !== undefined) {
            const siblings = yield* repo.lessonSources(tenant, agentId, current.lesson_id)
            const others = siblings.filter((s) => s.id !== id)
            const target = Math.min(input.position, others.length)
            const order = [...others.slice(0, target), current, ...others.slice(target)].map((s) => s.id)
            yield* repo.renumber("lesson_sources", order, at)
          }
          if (input.title !== undefined) yield* knowledge.retitle(current.knowledge_source_id, input.title, at)
          yield* repo.touchSource(id, at)
          return toLessonSource(yield* sourceOf(tenant, agentId, id))
        })
      )
    })

    const remove = Effect.fn("LessonSources.delete")(function* (caller: CallerShape, agentId: AgentId, id: LessonSourceId) {
      const tenant = tenantOf(caller)
      yield* trainingAgent(agents, tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lock(agentId)
          const current = yield* sourceOf(tenant, agentId, id)
          const at = yield* now
          yield* removal.drop(tenant, [current], at)
          const rest = yield* repo.lessonSources(tenant, agentId, current.lesson_id)
          yield* repo.renumber("lesson_sources", rest.map((s) => s.id), at)
          return { id, object: "lesson_source" as const, deleted: true as const }
        })
      )
    })

    /** The lesson a lesson source belongs to (what a reply citing its knowledge source names). */
    const lessonOf = (tenant: Tenant, agentId: AgentId, lessonSourceId: string) => repo.lessonOfSource(tenant, agentId, lessonSourceId)

    return { list, create, update, remove, lessonOf } as const
  }),
  dependencies: [TrainingRepo.Default, SourceRemoval.Default, Files.Default, Knowledge.Default, Agents.Default]
}) {}

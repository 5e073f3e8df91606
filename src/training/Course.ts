/**
 * Modules and lessons of a training agent. Every write takes the agent's course
 * lock, so positions stay dense (0..n-1 within the parent). A parent with
 * children is deleted only with `cascade`; then its children go with it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallerShape } from "../../schema/Auth.js"
import { HasChildren, ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import { type AgentId, LessonId, ModuleId } from "../../schema/Ids.js"
import { type Tenant, tenantOf } from "../../schema/Tenant.js"
import {
  type CreateLesson,
  type CreateModule,
  MAX_LESSONS,
  MAX_MODULES,
  type UpdateLesson,
  type UpdateModule
} from "../../schema/Training.js"
import { Agents } from "../agents/Agents.js"
import { mint } from "../Mint.js"
import { now } from "../Time.js"
import { trainingAgent } from "./Guard.js"
import { SourceRemoval } from "./SourceRemoval.js"
import { toLesson, toModule, TrainingRepo } from "./TrainingRepo.js"

const noModule = (id: string, param: string) => new ResourceMissing({ message: `No such module: '${id}'`, param })
const noLesson = (id: string) => new ResourceMissing({ message: `No such lesson: '${id}'`, param: "lesson_id" })

/** `order` with `id` taken out and put back at `target` (clamped to the end). */
const moved = <A extends { readonly id: string }>(order: ReadonlyArray<A>, item: A, target: number) => {
  const others = order.filter((r) => r.id !== item.id)
  const at = Math.min(target, others.length)
  return [...others.slice(0, at), item, ...others.slice(at)].map((r) => r.id)
}

export class Course extends Effect.Service<Course>()("Training/Course", {
  effect: Effect.gen(function* () {
    const repo = yield* TrainingRepo
    const agents = yield* Agents
    const removal = yield* SourceRemoval

    /** Runs `work` for a training agent, in one transaction holding its course lock. */
    const writing = <A, E>(caller: CallerShape, agentId: AgentId, work: (tenant: Tenant) => Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const tenant = tenantOf(caller)
        yield* trainingAgent(agents, tenant, agentId)
        return yield* repo.transaction(Effect.zipRight(repo.lock(agentId), work(tenant)))
      })

    const moduleOf = (tenant: Tenant, agentId: AgentId, id: ModuleId, param: string) =>
      Effect.flatMap(repo.findModule(tenant, agentId, id), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(noModule(id, param))
      )

    const lessonOf = (tenant: Tenant, agentId: AgentId, id: LessonId) =>
      Effect.flatMap(repo.findLesson(tenant, agentId, id), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(noLesson(id))
      )

    // modules

    const listModules = Effect.fn("Course.listModules")(function* (caller: CallerShape, agentId: AgentId) {
      const tenant = tenantOf(caller)
      yield* trainingAgent(agents, tenant, agentId)
      return (yield* repo.modules(tenant, agentId)).map(toModule)
    })

    const createModule = Effect.fn("Course.createModule")(function* (caller: CallerShape, agentId: AgentId, input: CreateModule) {
      const id = yield* mint(ModuleId, "mod")
      return yield* writing(caller, agentId, (tenant) =>
        Effect.gen(function* () {
          const rows = yield* repo.modules(tenant, agentId)
          if (rows.length >= MAX_MODULES) {
            return yield* new ParameterInvalid({ message: `A training agent has at most ${MAX_MODULES} modules`, param: "title" })
          }
          const position = Math.min(input.position ?? rows.length, rows.length)
          yield* repo.shiftFrom("course_modules", agentId, position)
          const row = yield* repo.insertModule(
            tenant,
            agentId,
            { id, title: input.title, description: input.description ?? "", position },
            yield* now
          )
          return toModule(row)
        })
      )
    })

    const updateModule = Effect.fn("Course.updateModule")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ModuleId,
      input: UpdateModule
    ) {
      return yield* writing(caller, agentId, (tenant) =>
        Effect.gen(function* () {
          const current = yield* moduleOf(tenant, agentId, id, "module_id")
          const at = yield* now
          if (input.position !== undefined) {
            yield* repo.renumber("course_modules", moved(yield* repo.modules(tenant, agentId), current, input.position), at)
          }
          const row = yield* repo.updateModule(
            id,
            {
              ...(input.title !== undefined ? { title: input.title } : {}),
              ...(input.description !== undefined ? { description: input.description } : {})
            },
            at
          )
          return toModule(row)
        })
      )
    })

    /** The lesson's sources and the lesson itself (the caller renumbers the siblings). */
    const dropLesson = (tenant: Tenant, agentId: AgentId, lessonId: LessonId, at: Date) =>
      Effect.gen(function* () {
        yield* removal.drop(tenant, yield* repo.lessonSources(tenant, agentId, lessonId), at)
        yield* repo.deleteLesson(lessonId)
      })

    const deleteModule = Effect.fn("Course.deleteModule")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ModuleId,
      cascade: boolean
    ) {
      return yield* writing(caller, agentId, (tenant) =>
        Effect.gen(function* () {
          yield* moduleOf(tenant, agentId, id, "module_id")
          const lessons = yield* repo.lessons(tenant, agentId, id)
          if (lessons.length > 0 && !cascade) {
            return yield* new HasChildren({
              message: `Module '${id}' has ${lessons.length} lesson(s): delete them first, or pass ?cascade=true to delete them with it`,
              param: "cascade"
            })
          }
          const at = yield* now
          yield* Effect.forEach(lessons, (lesson) => dropLesson(tenant, agentId, lesson.id, at), { discard: true })
          yield* repo.deleteModule(id)
          const rest = yield* repo.modules(tenant, agentId)
          yield* repo.renumber("course_modules", rest.map((r) => r.id), at)
          return { id, object: "module" as const, deleted: true as const }
        })
      )
    })

    // lessons

    const listLessons = Effect.fn("Course.listLessons")(function* (caller: CallerShape, agentId: AgentId, moduleId: ModuleId) {
      const tenant = tenantOf(caller)
      yield* trainingAgent(agents, tenant, agentId)
      yield* moduleOf(tenant, agentId, moduleId, "module_id")
      return (yield* repo.lessons(tenant, agentId, moduleId)).map(toLesson)
    })

    const createLesson = Effect.fn("Course.createLesson")(function* (caller: CallerShape, agentId: AgentId, input: CreateLesson) {
      const id = yield* mint(LessonId, "lsn")
      return yield* writing(caller, agentId, (tenant) =>
        Effect.gen(function* () {
          yield* moduleOf(tenant, agentId, input.module_id, "module_id")
          const rows = yield* repo.lessons(tenant, agentId, input.module_id)
          if (rows.length >= MAX_LESSONS) {
            return yield* new ParameterInvalid({ message: `A module has at most ${MAX_LESSONS} lessons`, param: "module_id" })
          }
          const position = Math.min(input.position ?? rows.length, rows.length)
          yield* repo.shiftFrom("course_lessons", input.module_id, position)
          const row = yield* repo.insertLesson(
            tenant,
            agentId,
            { id, moduleId: input.module_id, title: input.title, content: input.content ?? "", position },
            yield* now
          )
          return toLesson(row)
        })
      )
    })

    const updateLesson = Effect.fn("Course.updateLesson")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: LessonId,
      input: UpdateLesson
    ) {
      return yield* writing(caller, agentId, (tenant) =>
        Effect.gen(function* () {
          const current = yield* lessonOf(tenant, agentId, id)
          const at = yield* now
          const target = input.module_id ?? current.module_id
          if (target !== current.module_id) {
            yield* moduleOf(tenant, agentId, target, "module_id")
            const siblings = yield* repo.lessons(tenant, agentId, target)
            if (siblings.length >= MAX_LESSONS) {
              return yield* new ParameterInvalid({ message: `A module has at most ${MAX_LESSONS} lessons`, param: "module_id" })
            }
            const position = Math.min(input.position ?? siblings.length, siblings.length)
            yield* repo.shiftFrom("course_lessons", target, position)
            yield* repo.updateLesson(id, { module_id: target, position }, at)
            const left = yield* repo.lessons(tenant, agentId, current.module_id)
            yield* repo.renumber("course_lessons", left.map((r) => r.id), at)
          } else if (input.position !== undefined) {
            const siblings = yield* repo.lessons(tenant, agentId, current.module_id)
            yield* repo.renumber("course_lessons", moved(siblings, current, input.position), at)
          }
          const row = yield* repo.updateLesson(
            id,
            {
              ...(input.title !== undefined ? { title: input.title } : {}),
              ...(input.content !== undefined ? { content: input.content } : {})
            },
            at
          )
          return toLesson(row)
        })
      )
    })

    const deleteLesson = Effect.fn("Course.deleteLesson")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: LessonId,
      cascade: boolean
    ) {
      return yield* writing(caller, agentId, (tenant) =>
        Effect.gen(function* () {
          const lesson = yield* lessonOf(tenant, agentId, id)
          const sources = yield* repo.lessonSources(tenant, agentId, id)
          if (sources.length > 0 && !cascade) {
            return yield* new HasChildren({
              message: `Lesson '${id}' has ${sources.length} source(s): delete them first, or pass ?cascade=true to delete them with it`,
              param: "cascade"
            })
          }
          const at = yield* now
          yield* dropLesson(tenant, agentId, id, at)
          const rest = yield* repo.lessons(tenant, agentId, lesson.module_id)
          yield* repo.renumber("course_lessons", rest.map((r) => r.id), at)
          return { id, object: "lesson" as const, deleted: true as const }
        })
      )
    })

    return {
      listModules,
      createModule,
      updateModule,
      deleteModule,
      listLessons,
      createLesson,
      updateLesson,
      deleteLesson
    } as const
  }),
  dependencies: [TrainingRepo.Default, SourceRemoval.Default, Agents.Default]
}) {}

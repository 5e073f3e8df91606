/**
 * SQL for modules, lessons and lesson sources, rows decoded with Schema. A
 * lesson source is read joined to the knowledge source row it owns (type,
 * title and progress live there). Every API read is scoped to one workspace,
 * environment and agent; positions are dense 0..n-1 within a parent, kept so
 * by writers holding the agent's course lock.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AgentId, LessonId, LessonSourceId, ModuleId, SourceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { type Lesson, type LessonSource, LessonSourceType, type Module } from "../../schema/Training.js"
import { decodeAll, decodeOne, decodeSingle, execute, lockWith, transaction } from "../db/Sql.js"
import { processingFields, toProcessing } from "../knowledge/Processing.js"
import { iso } from "../Time.js"

export const ModuleRow = Schema.Struct({
  id: ModuleId,
  agent_id: AgentId,
  title: Schema.String,
  description: Schema.String,
  position: Schema.Int,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ModuleRow = typeof ModuleRow.Type

export const LessonRow = Schema.Struct({
  id: LessonId,
  agent_id: AgentId,
  module_id: ModuleId,
  title: Schema.String,
  content: Schema.String,
  position: Schema.Int,
  sources_added: Schema.Int,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type LessonRow = typeof LessonRow.Type

export const LessonSourceRow = Schema.Struct({
  id: LessonSourceId,
  agent_id: AgentId,
  lesson_id: LessonId,
  knowledge_source_id: SourceId,
  type: LessonSourceType,
  title: Schema.String,
  is_primary: Schema.Boolean,
  position: Schema.Int,
  ...processingFields,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type LessonSourceRow = typeof LessonSourceRow.Type

export const toModule = (row: ModuleRow): Module => ({
  id: row.id,
  object: "module",
  agent_id: row.agent_id,
  title: row.title,
  description: row.description,
  position: row.position,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

export const toLesson = (row: LessonRow): Lesson => ({
  id: row.id,
  object: "lesson",
  agent_id: row.agent_id,
  module_id: row.module_id,
  title: row.title,
  content: row.content,
  position: row.position,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

export const toLessonSource = (row: LessonSourceRow): LessonSource => ({
  id: row.id,
  object: "lesson_source",
  agent_id: row.agent_id,
  lesson_id: row.lesson_id,
  type: row.type,
  title: row.title,
  is_primary: row.is_primary,
  position: row.position,
  ...toProcessing(row),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const moduleColumns = "id, agent_id, title, description, position, created_at, updated_at"
const lessonColumns = "id, agent_id, module_id, title, content, position, sources_added, created_at, updated_at"
const sourceColumns = `ls.id, ls.agent_id, ls.lesson_id, ls.knowledge_source_id, ls.type, ks.title, ls.is_primary, ls.position,
  ks.status, ks.phase, ks.progress, ks.attempts, ks.next_attempt_at, ks.error, ks.error_code, ks.source_ref,
  ks.size_bytes::text as size_bytes, ks.chunk_count, ls.created_at,
  greatest(ls.updated_at, ks.updated_at) as updated_at`

/** The tables whose rows are ordered within a parent, with that parent's column. */
const ordered = {
  course_modules: "agent_id",
  course_lessons: "module_id",
  lesson_sources: "lesson_id"
} as const
type OrderedTable = keyof typeof ordered

export interface NewModule {
  readonly id: ModuleId
  readonly title: string
  readonly description: string
  readonly position: number
}

export interface NewLesson {
  readonly id: LessonId
  readonly moduleId: ModuleId
  readonly title: string
  readonly content: string
  readonly position: number
}

export interface NewLessonSource {
  readonly id: LessonSourceId
  readonly lessonId: LessonId
  readonly knowledgeSourceId: SourceId
  readonly type: LessonSourceType
  readonly isPrimary: boolean
  readonly position: number
}

export class TrainingRepo extends Effect.Service<TrainingRepo>()("Training/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mCols = sql.literal(moduleColumns)
    const lCols = sql.literal(lessonColumns)
    const sCols = sql.literal(sourceColumns)
    const scoped = (tenant: Tenant, agentId: AgentId, table: string) =>
      sql`${sql(table)}.workspace_id = ${tenant.workspaceId} and ${sql(table)}.environment = ${tenant.environment}
        and ${sql(table)}.agent_id = ${agentId}`
    const sources = sql.literal("lesson_sources as ls join knowledge_sources as ks on ks.id = ls.knowledge_source_id")

    /** Every write to an agent's course queues on this, on every instance (positions stay dense). */
    const lock = (agentId: AgentId) => lockWith(sql)(`course:${agentId}`)

    const stamped = (tenant: Tenant, agentId: AgentId, at: Date) => ({
      workspace_id: tenant.workspaceId,
      environment: tenant.environment,
      agent_id: agentId,
      created_at: at,
      updated_at: at
    })

    /** Makes room at `position` under `parent`: every sibling at or after it moves down by one. */
    const shiftFrom = (table: OrderedTable, parent: string, position: number) =>
      execute(sql`
        update ${sql(table)} set position = position + 1
        where ${sql(ordered[table])} = ${parent} and position >= ${position}`)

    /** Writes each row's index in `ids` as its position. */
    const renumber = (table: OrderedTable, ids: ReadonlyArray<string>, at: Date) =>
      Effect.forEach(
        ids,
        (id, position) => execute(sql`update ${sql(table)} set position = ${position}, updated_at = ${at} where id = ${id}`),
        { discard: true }
      )

    // modules

    const modules = (tenant: Tenant, agentId: AgentId) =>
      decodeAll(ModuleRow, sql`select ${mCols} from course_modules where ${scoped(tenant, agentId, "course_modules")}
        order by position, seq`)

    const findModule = (tenant: Tenant, agentId: AgentId, id: ModuleId) =>
      decodeOne(ModuleRow, sql`select ${mCols} from course_modules
        where ${scoped(tenant, agentId, "course_modules")} and id = ${id}`)

    const insertModule = (tenant: Tenant, agentId: AgentId, input: NewModule, at: Date) =>
      decodeSingle(
        ModuleRow,
        sql`insert into course_modules ${sql.insert({
          id: input.id,
          title: input.title,
          description: input.description,
          position: input.position,
          ...stamped(tenant, agentId, at)
        })} returning ${mCols}`
      )

    const updateModule = (id: ModuleId, changes: { readonly title?: string; readonly description?: string }, at: Date) =>
      decodeSingle(
        ModuleRow,
        sql`update course_modules set ${sql.update({ ...changes, updated_at: at })} where id = ${id} returning ${mCols}`
      )

    const deleteModule = (id: ModuleId) => execute(sql`delete from course_modules where id = ${id}`)

    // lessons

    const lessons = (tenant: Tenant, agentId: AgentId, moduleId: ModuleId) =>
      decodeAll(LessonRow, sql`select ${lCols} from course_lessons
        where ${scoped(tenant, agentId, "course_lessons")} and module_id = ${moduleId}
        order by position, seq`)

    const findLesson = (tenant: Tenant, agentId: AgentId, id: LessonId) =>
      decodeOne(LessonRow, sql`select ${lCols} from course_lessons
        where ${scoped(tenant, agentId, "course_lessons")} and id = ${id}`)

    const insertLesson = (tenant: Tenant, agentId: AgentId, input: NewLesson, at: Date) =>
      decodeSingle(
        LessonRow,
        sql`insert into course_lessons ${sql.insert({
          id: input.id,
          module_id: input.moduleId,
          title: input.title,
          content: input.content,
          position: input.position,
          ...stamped(tenant, agentId, at)
        })} returning ${lCols}`
      )

    const updateLesson = (
      id: LessonId,
      changes: { readonly title?: string; readonly content?: string; readonly module_id?: ModuleId; readonly position?: number },
      at: Date
    ) =>
      decodeSingle(
        LessonRow,
        sql`update course_lessons set ${sql.update({ ...changes, updated_at: at })} where id = ${id} returning ${lCols}`
      )

    /** Counts one more source ever added to the lesson; returns how many there were before. */
    const countSourceAdded = (id: LessonId) =>
      Effect.map(
        decodeSingle(
          Schema.Struct({ sources_added: Schema.Int }),
          sql`update course_lessons set sources_added = sources_added + 1 where id = ${id} returning sources_added`
        ),
        (row) => row.sources_added - 1
      )

    const deleteLesson = (id: LessonId) => execute(sql`delete from course_lessons where id = ${id}`)

    // lesson sources

    const lessonSources = (tenant: Tenant, agentId: AgentId, lessonId: LessonId) =>
      decodeAll(LessonSourceRow, sql`select ${sCols} from ${sources}
        where ${scoped(tenant, agentId, "ls")} and ls.lesson_id = ${lessonId}
        order by ls.position, ls.seq`)

    const findSource = (tenant: Tenant, agentId: AgentId, id: LessonSourceId) =>
      decodeOne(LessonSourceRow, sql`select ${sCols} from ${sources}
        where ${scoped(tenant, agentId, "ls")} and ls.id = ${id}`)

    /** The lesson source owning a knowledge source row, with its lesson (the pipeline's report). */
    const byKnowledgeSource = (knowledgeSourceId: string) =>
      Effect.gen(function* () {
        const source = yield* decodeOne(
          LessonSourceRow,
          sql`select ${sCols} from ${sources} where ls.knowledge_source_id = ${knowledgeSourceId}`
        )
        if (Option.isNone(source)) return Option.none()
        const lesson = yield* decodeOne(LessonRow, sql`select ${lCols} from course_lessons where id = ${source.value.lesson_id}`)
        return Option.map(lesson, (l) => ({ source: source.value, lesson: l }))
      })

    /** The lesson a lesson source belongs to, by the lesson source's id (replies name it). */
    const lessonOfSource = (tenant: Tenant, agentId: AgentId, lessonSourceId: string) =>
      decodeOne(
        Schema.Struct({ id: LessonId, title: Schema.String }),
        sql`select l.id, l.title from lesson_sources as ls join course_lessons as l on l.id = ls.lesson_id
          where ${scoped(tenant, agentId, "ls")} and ls.id = ${lessonSourceId}`
      )

    const insertSource = (tenant: Tenant, agentId: AgentId, input: NewLessonSource, at: Date) =>
      execute(
        sql`insert into lesson_sources ${sql.insert({
          id: input.id,
          lesson_id: input.lessonId,
          knowledge_source_id: input.knowledgeSourceId,
          type: input.type,
          is_primary: input.isPrimary,
          position: input.position,
          ...stamped(tenant, agentId, at)
        })}`
      )

    const touchSource = (id: LessonSourceId, at: Date) =>
      execute(sql`update lesson_sources set updated_at = ${at} where id = ${id}`)

    const deleteSource = (id: LessonSourceId) => execute(sql`delete from lesson_sources where id = ${id}`)

    return {
      transaction: transaction(sql),
      lock,
      shiftFrom,
      renumber,
      modules,
      findModule,
      insertModule,
      updateModule,
      deleteModule,
      lessons,
      findLesson,
      insertLesson,
      updateLesson,
      countSourceAdded,
      deleteLesson,
      lessonSources,
      findSource,
      byKnowledgeSource,
      lessonOfSource,
      insertSource,
      touchSource,
      deleteSource
    } as const
  })
}) {}

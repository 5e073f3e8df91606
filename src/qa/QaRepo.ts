/**
 * SQL for Q&A and categories, through the `db/Sql.ts` helpers (rows decoded,
 * database failures defects). Every query is scoped to one workspace and environment.
 * The knowledge area writes a source's Q&A through `SourceQa.ts`; retrieval
 * reads `qa_items` itself (see 0007_qa.ts); re-embedding writes vectors through `QaVectorsRepo.ts`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AgentId, CategoryId, QaId, SourceId } from "../../schema/Ids.js"
import { type Category, type Qa, QaOrigin } from "../../schema/Qa.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { LanguageTag } from "../../schema/Languages.js"
import { makeBulkInsert } from "../db/BulkInsert.js"
import { realArrayLiteral } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute, lockWith, transaction } from "../db/Sql.js"
import type { PageRequest } from "../http/Pagination.js"
import { iso, now } from "../Time.js"
import { CategoryRow, toCategory } from "./CategoryRow.js"

/** The text a Q&A's embedding is computed from, the same for every writer. */
export const qaEmbeddingText = (question: string, answer: string): string => `${question}\n${answer}`

export const QaRow = Schema.Struct({
  seq: Schema.String,
  id: QaId,
  agent_id: AgentId,
  question: Schema.String,
  answer: Schema.String,
  category_id: Schema.NullOr(CategoryId),
  origin: QaOrigin,
  source_id: Schema.NullOr(SourceId),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type QaRow = typeof QaRow.Type

export const toQa = (row: QaRow): Qa => ({
  id: row.id,
  object: "qa",
  agent_id: row.agent_id,
  question: row.question,
  answer: row.answer,
  category_id: row.category_id,
  origin: row.origin,
  source_id: row.source_id,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

export interface QaInsert {
  readonly question: string
  readonly answer: string
  readonly categoryId: CategoryId | null
  readonly origin: QaOrigin
  readonly sourceId: SourceId | null
  readonly embedding: ReadonlyArray<number>
  /** What its words are indexed in; absent: its source's language, else its agent's (`search_tsv`'s trigger). */
  readonly language?: LanguageTag
}

export interface QaFilters {
  readonly category: Option.Option<CategoryId | "none">
  readonly origin: Option.Option<QaOrigin>
}

export interface QaChanges {
  readonly question?: string
  readonly answer?: string
  readonly category_id?: CategoryId | null
  readonly origin?: QaOrigin
  readonly embedding?: ReadonlyArray<number>
  readonly language?: LanguageTag
}

// `seq` is read as text (a bigint); queries order by the table column, not the alias
const qaColumns = `qa_items.seq::text as seq, qa_items.id, qa_items.agent_id, qa_items.question, qa_items.answer,
  qa_items.category_id, qa_items.origin, qa_items.source_id, qa_items.created_at, qa_items.updated_at`
const categoryColumns = "id, agent_id, name, description, position, created_at, updated_at"

// rows go in batches so one statement stays well below any parameter or size limit
const insertBatch = 200

/** What `insertQa` writes of a Q&A (`seq` is generated). */
const qaInsertColumns = {
  id: "text",
  workspace_id: "text",
  environment: "text",
  agent_id: "text",
  question: "text",
  answer: "text",
  category_id: "text",
  origin: "text",
  source_id: "text",
  embedding: "float4[]",
  language: "text",
  created_at: "timestamptz",
  updated_at: "timestamptz"
} as const

const IdRow = Schema.Struct({ id: QaId })
const MarkRow = Schema.Struct({ mark: Schema.String })

export class QaRepo extends Effect.Service<QaRepo>()("Qa/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator
    const qaCols = sql.literal(qaColumns)
    const catCols = sql.literal(categoryColumns)
    const tenantIs = (t: { readonly workspaceId: string; readonly environment: string }, table: string) =>
      sql`${sql(table)}.workspace_id = ${t.workspaceId} and ${sql(table)}.environment = ${t.environment}`
    const scoped = (tenant: Tenant, agentId: AgentId, table: string) =>
      sql`${tenantIs(tenant, table)} and ${sql(table)}.agent_id = ${agentId}`
    const inTransaction = transaction(sql)
    const bulkInsert = yield* makeBulkInsert
    const lockFor = lockWith(sql)

    // categories

    /** Every category of the agent, in position order. */
    const categoryRows = (tenant: Tenant, agentId: AgentId) =>
      decodeAll(
        CategoryRow,
        sql`select ${catCols} from categories where ${scoped(tenant, agentId, "categories")} order by position, seq`
      )

    const categoriesOf = (tenant: Tenant, agentId: AgentId): Effect.Effect<ReadonlyArray<Category>> =>
      Effect.map(categoryRows(tenant, agentId), (rows) => rows.map(toCategory))

    /** The category, locked against deletion until the transaction ends when `lock` is `share`. */
    const findCategory = (
      tenant: Tenant,
      agentId: AgentId,
      id: CategoryId,
      options: { readonly lock?: "share" } = {}
    ) =>
      decodeOne(CategoryRow, sql`
        select ${catCols} from categories
        where ${scoped(tenant, agentId, "categories")} and id = ${id}
        ${options.lock === "share" ? sql.literal("for share") : sql.literal("")}`)

    /** The agent's category named `name` (ignoring case), other than `except`. */
    const categoryNamed = (tenant: Tenant, agentId: AgentId, name: string, except?: CategoryId) =>
      decodeOne(CategoryRow, sql`
        select ${catCols} from categories
        where ${scoped(tenant, agentId, "categories")} and lower(name) = lower(${name})
        ${except === undefined ? sql.literal("") : sql`and id <> ${except}`}`)

    /** Serialises writers of one agent's categories (positions), across instances; inside a transaction. */
    const lockCategories = (agentId: AgentId) => lockFor(`categories:${agentId}`)

    /** Makes room at `position`: every category at or after it moves down by one. */
    const shiftFrom = (tenant: Tenant, agentId: AgentId, position: number) =>
      execute(sql`
        update categories set position = position + 1
        where ${scoped(tenant, agentId, "categories")} and position >= ${position}`)

    const insertCategory = (
      tenant: Tenant,
      agentId: AgentId,
      input: { readonly name: string; readonly description: string; readonly position: number }
    ) =>
      Effect.gen(function* () {
        const id = yield* ids.make("cat")
        const at = yield* now
        return yield* decodeSingle(CategoryRow, sql`
          insert into categories ${sql.insert({
            id,
            workspace_id: tenant.workspaceId,
            environment: tenant.environment,
            agent_id: agentId,
            name: input.name,
            description: input.description,
            position: input.position,
            created_at: at,
            updated_at: at
          })}
          returning ${catCols}`)
      })

    const updateCategory = (
      id: CategoryId,
      changes: { readonly name?: string; readonly description?: string; readonly position?: number },
      at: Date
    ) =>
      decodeSingle(CategoryRow, sql`
        update categories set ${sql.update({ ...changes, updated_at: at })}
        where id = ${id}
        returning ${catCols}`)

    /** Writes each category's index in `order` as its position, where it changed. */
    const renumber = (order: ReadonlyArray<CategoryRow>, at: Date) =>
      Effect.forEach(
        order.flatMap((row, position) => (row.position === position ? [] : [{ id: row.id, position }])),
        ({ id, position }) => updateCategory(id, { position }, at),
        { discard: true }
      )

    /** Deletes the category; its Q&A stay, uncategorised. */
    const deleteCategory = (tenant: Tenant, agentId: AgentId, id: CategoryId, at: Date) =>
      Effect.zipRight(
        execute(sql`
          update qa_items set category_id = null, updated_at = ${at}
          where ${scoped(tenant, agentId, "qa_items")} and category_id = ${id}`),
        execute(sql`delete from categories where ${scoped(tenant, agentId, "categories")} and id = ${id}`)
      )

    /**
     * One category per draft, in draft order: the agent's existing category of
     * that name (ignoring case), else a new one appended after the others.
     */
    const createCategories = (
      tenant: Tenant,
      agentId: AgentId,
      drafts: ReadonlyArray<{ readonly name: string; readonly description: string }>
    ): Effect.Effect<ReadonlyArray<Category>> =>
      inTransaction(
        Effect.gen(function* () {
          yield* lockCategories(agentId)
          let count = (yield* categoryRows(tenant, agentId)).length
          const result: Array<CategoryRow> = []
          for (const draft of drafts) {
            const name = draft.name.trim()
            if (name === "") continue
            // compared by the database, whose case folding the unique index uses
            const existing = yield* categoryNamed(tenant, agentId, name)
            if (Option.isSome(existing)) {
              if (!result.some((r) => r.id === existing.value.id)) result.push(existing.value)
              continue
            }
            result.push(
              yield* insertCategory(tenant, agentId, { name, description: draft.description.trim(), position: count++ })
            )
          }
          return result.map(toCategory)
        })
      )

    // Q&A

    const qaPage = (tenant: Tenant, agentId: AgentId, filters: QaFilters, page: PageRequest) =>
      decodeAll(QaRow, sql`
        select ${qaCols} from qa_items
        where ${scoped(tenant, agentId, "qa_items")}
          ${Option.match(filters.category, {
            onNone: () => sql.literal(""),
            onSome: (c) => (c === "none" ? sql`and qa_items.category_id is null` : sql`and qa_items.category_id = ${c}`)
          })}
          ${Option.match(filters.origin, { onNone: () => sql.literal(""), onSome: (o) => sql`and qa_items.origin = ${o}` })}
          ${Option.isSome(page.after) ? sql`and qa_items.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by qa_items.seq desc
        limit ${page.limit + 1}`)

    const findQa = (tenant: Tenant, agentId: AgentId, id: QaId, options: { readonly forUpdate?: boolean } = {}) =>
      decodeOne(QaRow, sql`
        select ${qaCols} from qa_items
        where ${scoped(tenant, agentId, "qa_items")} and qa_items.id = ${id}
        ${options.forUpdate ? sql.literal("for update") : sql.literal("")}`)

    /** Inserts the items (new ids, the Clock's time) and returns their rows. */
    const insertQaRows = (tenant: Tenant, agentId: AgentId, items: ReadonlyArray<QaInsert>) =>
      Effect.gen(function* () {
        const at = yield* now
        const out: Array<QaRow> = []
        for (let start = 0; start < items.length; start += insertBatch) {
          const batch = items.slice(start, start + insertBatch)
          const records = yield* Effect.forEach(batch, (item) =>
            Effect.map(ids.make("qa"), (id) => ({
              id,
              question: item.question,
              answer: item.answer,
              category_id: item.categoryId,
              origin: item.origin,
              source_id: item.sourceId,
              embedding: realArrayLiteral(item.embedding),
              language: item.language ?? null
            }))
          )
          const rows = yield* decodeAll(QaRow, sql`
            insert into qa_items (id, workspace_id, environment, agent_id, question, answer, category_id, origin,
              source_id, embedding, language, created_at, updated_at)
            select r.id, ${tenant.workspaceId}, ${tenant.environment}, ${agentId}, r.question, r.answer,
              r.category_id, r.origin, r.source_id, r.embedding::real[], r.language, ${at}, ${at}
            from jsonb_to_recordset(${JSON.stringify(records)}::text::jsonb) as r(id text, question text,
              answer text, category_id text, origin text, source_id text, embedding text, language text)
            returning ${qaCols}`)
          out.push(...rows)
        }
        return out
      })

    /** For writers such as ingestion, which need no rows back: how many were inserted. */
    const insertQa = (tenant: Tenant, agentId: AgentId, items: ReadonlyArray<QaInsert>): Effect.Effect<number> =>
      Effect.gen(function* () {
        const at = yield* now
        const rows = yield* Effect.forEach(items, (item) =>
          Effect.map(ids.make("qa"), (id) => ({
            id,
            workspace_id: tenant.workspaceId,
            environment: tenant.environment,
            agent_id: agentId,
            question: item.question,
            answer: item.answer,
            category_id: item.categoryId,
            origin: item.origin,
            source_id: item.sourceId,
            embedding: item.embedding,
            language: item.language ?? null,
            created_at: at,
            updated_at: at
          }))
        )
        yield* execute(bulkInsert("qa_items", qaInsertColumns, rows))
        return rows.length
      })

    const updateQa = (id: QaId, changes: QaChanges, at: Date) => {
      const { embedding, ...columns } = changes
      return decodeSingle(QaRow, sql`
        update qa_items set ${sql.update({ ...columns, updated_at: at })}
        ${embedding === undefined ? sql.literal("") : sql`, embedding = ${realArrayLiteral(embedding)}::text::real[]`}
        where id = ${id}
        returning ${qaCols}`)
    }

    const deleteQa = (tenant: Tenant, agentId: AgentId, id: QaId) =>
      decodeOne(IdRow, sql`
        delete from qa_items where ${scoped(tenant, agentId, "qa_items")} and id = ${id}
        returning id`)

    /** Removes that source's generated and CSV Q&A (an edited, now manual, one stays). */
    const deleteBySource = (tenant: Tenant, sourceId: SourceId): Effect.Effect<number> =>
      decodeAll(IdRow, sql`
        delete from qa_items
        where ${tenantIs(tenant, "qa_items")} and source_id = ${sourceId} and origin in ('generated', 'csv')
        returning id`).pipe(Effect.map((rows) => rows.length))

    /** The agent's latest Q&A sequence number ("0" when none): a point in its history. */
    const qaMark = (tenant: Tenant, agentId: AgentId) =>
      decodeSingle(
        MarkRow,
        sql`select coalesce(max(seq), 0)::text as mark from qa_items where ${scoped(tenant, agentId, "qa_items")}`
      ).pipe(Effect.map((row) => row.mark))

    /**
     * Removes the agent's generated Q&A written up to `mark`, and any drawn from
     * `sourceIds`; manual and CSV ones, and generated ones written after the mark
     * from other sources, stay.
     */
    const deleteGenerated = (
      tenant: Tenant,
      agentId: AgentId,
      options: { readonly upTo: string; readonly sourceIds: ReadonlyArray<SourceId> }
    ) =>
      decodeAll(IdRow, sql`
        delete from qa_items
        where ${scoped(tenant, agentId, "qa_items")} and origin = 'generated'
          and (seq <= ${options.upTo}::bigint
            ${options.sourceIds.length > 0 ? sql`or source_id in ${sql.in(options.sourceIds)}` : sql.literal("")})
        returning id`).pipe(Effect.map((rows) => rows.length))

    return {
      transaction: inTransaction,
      categoriesOf,
      categoryRows,
      findCategory,
      categoryNamed,
      lockCategories,
      shiftFrom,
      insertCategory,
      updateCategory,
      renumber,
      deleteCategory,
      createCategories,
      qaPage,
      findQa,
      insertQaRows,
      insertQa,
      updateQa,
      deleteQa,
      deleteBySource,
      qaMark,
      deleteGenerated
    } as const
  })
}) {}

/**
 * Knowledge sources through the API: create one (text, url, file_id, csv_qa)
 * or a batch of URLs, list, poll, delete. Creation writes the source and its
 * ingestion job in one transaction; the pipeline (`Pipeline.ts`) does the work.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { CallerShape } from "../../schema/Auth.js"
import {
  FileNotUploaded,
  InvalidIdempotencyKey,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  ResourceMissing,
  TooManyUrls
} from "../../schema/Errors.js"
import { type AgentId, SourceId } from "../../schema/Ids.js"
import {
  type CreateSource,
  MAX_BATCH_URLS,
  MAX_CSV_BYTES,
  MAX_TEXT_BYTES,
  type SourceListParams
} from "../../schema/Knowledge.js"
import { JobQueue, withAfterCommit } from "../../layers/JobQueue.js"
import { type Tenant, tenantOf } from "../../schema/Tenant.js"
import { Agents } from "../agents/Agents.js"
import { AppConfig } from "../Config.js"
import * as Sql from "../db/Sql.js"
import { KnowledgeChanged } from "../events/KnowledgeChanged.js"
import { Files } from "../files/Files.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { mint } from "../Mint.js"
import { checkUrl } from "../net/UrlPolicy.js"
import { SourceQa } from "../qa/SourceQa.js"
import { Extractor } from "../../layers/Extractor.js"
import { now } from "../Time.js"
import { agentExists } from "./Guard.js"
import { KnowledgeRepo, type NewSource, toSource } from "./KnowledgeRepo.js"

/** The queue of ingestion jobs; the key is the agent id, so an agent's sources run one at a time, in order. */
export const INGEST_QUEUE = "ingest"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const byteLength = (s: string) => Buffer.byteLength(s, "utf8")

const required = <A>(value: A | undefined, param: string, type: string) =>
  value === undefined
    ? Effect.fail(new ParameterMissing({ message: `Missing required parameter for type ${type}: ${param}`, param }))
    : Effect.succeed(value)

const tooLarge = (param: string, max: number) =>
  new PayloadTooLarge({ message: `${param} must be at most ${max} bytes (1 MB)`, param })

export class Knowledge extends Effect.Service<Knowledge>()("Knowledge/Knowledge", {
  effect: Effect.gen(function* () {
    const transaction = Sql.transaction(yield* SqlClient.SqlClient)
    const repo = yield* KnowledgeRepo
    const agents = yield* Agents
    const files = yield* Files
    const qa = yield* SourceQa
    const queue = yield* JobQueue
    const config = yield* AppConfig
    const pages = yield* Paginator
    const extractor = yield* Extractor
    const knowledgeChanged = yield* KnowledgeChanged

    /** Source rows and their ingestion jobs, inside the caller's transaction (the agent's jobs run in this order). */
    const insertWithJobs = (tenant: Tenant, agentId: AgentId, sources: ReadonlyArray<NewSource>) =>
      Effect.gen(function* () {
        const rows = yield* repo.insert(tenant, sources)
        yield* queue.enqueueAll(
          rows.map((row) => ({ queue: INGEST_QUEUE, key: agentId, group: tenant.workspaceId, payload: { sourceId: row.id } }))
        )
        return rows
      })

    /** Sources and their jobs, committed together; the worker is woken after the commit. */
    const store = (tenant: Tenant, agentId: AgentId, sources: ReadonlyArray<NewSource>) =>
      transaction(insertWithJobs(tenant, agentId, sources)).pipe(withAfterCommit, Effect.map((rows) => rows.map(toSource)))

    const policy = (caller: CallerShape, param: string) => ({
      environment: caller.environment,
      allowPrivate: config.allowPrivateUrls,
      param
    })

    /** Checks one source's input and builds its row (no write): shared with lesson sources. */
    const prepare = Effect.fn("Knowledge.prepare")(function* (caller: CallerShape, agentId: AgentId, input: CreateSource) {
      const tenant = tenantOf(caller)
      const base = { id: yield* mint(SourceId, "src"), agentId, type: input.type, at: yield* now }
      let source: NewSource
      switch (input.type) {
        case "text": {
          const title = yield* required(input.title, "title", "text")
          const content = yield* required(input.content, "content", "text")
          if (content.trim() === "") return yield* new ParameterInvalid({ message: "content is empty", param: "content" })
          if (byteLength(content) > MAX_TEXT_BYTES) return yield* tooLarge("content", MAX_TEXT_BYTES)
          source = { ...base, title, sourceRef: "inline", sizeBytes: byteLength(content), content }
          break
        }
        case "url": {
          const url = yield* checkUrl(yield* required(input.url, "url", "url"), policy(caller, "url"))
          source = { ...base, title: input.title ?? url.href, sourceRef: url.href, sizeBytes: 0, content: null }
          break
        }
        case "file_id": {
          const fileId = yield* required(input.file_id, "file_id", "file_id")
          const file = yield* files.find(tenant, fileId)
          if (Option.isNone(file)) {
            return yield* new ResourceMissing({ message: `No such file: '${fileId}'`, param: "file_id" })
          }
          if (file.value.status !== "uploaded") {
            return yield* new FileNotUploaded({
              message: `File '${fileId}' is not uploaded yet: PUT its bytes, then confirm it`,
              param: "file_id"
            })
          }
          const title = input.title ?? file.value.filename
          source = { ...base, title, sourceRef: fileId, sizeBytes: file.value.size_bytes, content: null }
          break
        }
        case "csv_qa": {
          const content = yield* required(input.content, "content", "csv_qa")
          if (byteLength(content) > MAX_CSV_BYTES) return yield* tooLarge("content", MAX_CSV_BYTES)
          // read in a decoder process: the CSV is untrusted
          const parsed = yield* extractor
            .csvQa(content)
            .pipe(Effect.mapError((e) => new ParameterInvalid({ message: `The CSV could not be read: ${e.message}`, param: "content" })))
          if (Either.isLeft(parsed)) {
            const shown = parsed.left.slice(0, 20).map((e) => `line ${e.line}: ${e.message}`)
            const more = parsed.left.length > shown.length ? `; and ${parsed.left.length - shown.length} more` : ""
            return yield* new ParameterInvalid({
              message: `The CSV has ${parsed.left.length} bad row(s): ${shown.join("; ")}${more}`,
              param: "content"
            })
          }
          source = { ...base, title: input.title ?? "CSV Q&A", sourceRef: "inline", sizeBytes: byteLength(content), content }
          break
        }
      }
      return source
    })

    const create = Effect.fn("Knowledge.create")(function* (caller: CallerShape, agentId: AgentId, input: CreateSource) {
      const tenant = tenantOf(caller)
      yield* agentExists(agents, tenant, agentId)
      const [created] = yield* store(tenant, agentId, [yield* prepare(caller, agentId, input)])
      return created!
    })

    const batch = Effect.fn("Knowledge.batch")(function* (
      caller: CallerShape,
      agentId: AgentId,
      urls: ReadonlyArray<string>,
      idempotencyKey: string | undefined
    ) {
      if (idempotencyKey !== undefined && !uuid.test(idempotencyKey)) {
        return yield* new InvalidIdempotencyKey({
          message: "The batch endpoint takes an Idempotency-Key in UUID form",
          param: "Idempotency-Key"
        })
      }
      if (urls.length > MAX_BATCH_URLS) {
        return yield* new TooManyUrls({
          message: `A batch holds at most ${MAX_BATCH_URLS} URLs; got ${urls.length}`,
          param: "urls"
        })
      }
      if (urls.length === 0) return yield* new ParameterInvalid({ message: "urls must hold at least one URL", param: "urls" })
      const tenant = tenantOf(caller)
      yield* agentExists(agents, tenant, agentId)
      // name lookups run side by side; the first bad URL in order is the one reported
      const checked = yield* Effect.forEach(urls, (url, i) => Effect.either(checkUrl(url, policy(caller, `urls[${i}]`))), {
        concurrency: 16
      })
      const at = yield* now
      const sources: Array<NewSource> = []
      for (const result of checked) {
        if (Either.isLeft(result)) return yield* result.left
        const url = result.right
        sources.push({
          id: yield* mint(SourceId, "src"),
          agentId,
          type: "url",
          title: url.href,
          sourceRef: url.href,
          sizeBytes: 0,
          content: null,
          at
        })
      }
      const created = yield* store(tenant, agentId, sources)
      return { count: created.length, sources: created }
    })

    const list = Effect.fn("Knowledge.list")(function* (caller: CallerShape, agentId: AgentId, params: SourceListParams) {
      const tenant = tenantOf(caller)
      const page = yield* pages.parse(`agents/${agentId}/knowledge`, params, { status: params.status })
      yield* agentExists(agents, tenant, agentId)
      const rows = yield* repo.page(tenant, agentId, Option.fromNullable(params.status), page)
      const { pagination, rows: kept } = toPage(rows, page)
      return { sources: kept.map(toSource), pagination }
    })

    const found = (tenant: Tenant, agentId: AgentId, id: SourceId) =>
      Effect.flatMap(repo.find(tenant, agentId, id), (row) =>
        Option.match(row, {
          onNone: () => Effect.fail(new ResourceMissing({ message: `No such knowledge source: '${id}'`, param: "source_id" })),
          onSome: Effect.succeed
        })
      )

    const retrieve = Effect.fn("Knowledge.retrieve")(function* (caller: CallerShape, agentId: AgentId, id: SourceId) {
      return toSource(yield* found(tenantOf(caller), agentId, id))
    })

    /**
     * The source gone with its chunks and its generated and CSV Q&A, in the caller's transaction; a job still
     * queued for it just ends. Also a lesson source's (training). An indexed one's agent knows less: its
     * `KnowledgeChanged`.
     */
    const drop = (tenant: Tenant, id: SourceId, at: Date) =>
      Effect.gen(function* () {
        const source = yield* repo.byId(id)
        yield* repo.softDelete(id, at)
        yield* qa.removeOf(tenant, id)
        if (Option.isSome(source) && source.value.status === "indexed") yield* knowledgeChanged.changed(tenant, source.value.agent_id)
      })

    const remove = Effect.fn("Knowledge.delete")(function* (caller: CallerShape, agentId: AgentId, id: SourceId) {
      const tenant = tenantOf(caller)
      yield* found(tenant, agentId, id)
      yield* transaction(drop(tenant, id, yield* now))
      return { id, object: "knowledge_source" as const, deleted: true as const }
    })

    /** A lesson source's new title on the source it owns (training), in the caller's transaction. */
    const retitle = (id: SourceId, title: string, at: Date) => Effect.asVoid(repo.update(id, { title }, at))

    /** An agent's source, lesson-owned ones too (what a reply citing it names). */
    const sourceOf = (tenant: Tenant, agentId: AgentId, id: SourceId) => repo.findAny(tenant, agentId, id)

    return { create, batch, list, retrieve, remove, drop, retitle, sourceOf, prepare, insertWithJobs } as const
  }),
  dependencies: [KnowledgeRepo.Default, Files.Default, Agents.Default, SourceQa.Default]
}) {}

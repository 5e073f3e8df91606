/**
 * A crawl's schedule: when its timer is due, a new crawl of the same site starts (`scheduled_by` the crawl holding
 * the schedule) and the next run's timer is set a period on. A run is skipped, keeping the next one's time, when
 * the agent's crawl of the site is still queued or running, or when the agent is gone (the schedule stops then).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { crawlPageCap } from "../../schema/Crawls.js"
import { CrawlId } from "../../schema/Ids.js"
import { type Job, JobQueue, Outcome } from "../../layers/JobQueue.js"
import { Agents, nextRun } from "../agents/Agents.js"
import * as Sql from "../db/Sql.js"
import { mint } from "../Mint.js"
import { now } from "../Time.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { type CrawlRow, CrawlsRepo } from "./CrawlsRepo.js"
import { CRAWL_QUEUE, scheduleRun } from "./Queues.js"

const Timer = Schema.Struct({ crawlId: CrawlId, at: Schema.String })
const decodeTimer = Schema.decodeUnknownOption(Timer)

export class CrawlSchedule extends Effect.Service<CrawlSchedule>()("Crawls/CrawlSchedule", {
  effect: Effect.gen(function* () {
    const transaction = Sql.transaction(yield* SqlClient.SqlClient)
    const repo = yield* CrawlsRepo
    const agents = yield* Agents
    const workspaces = yield* Workspaces
    const queue = yield* JobQueue

    /** A new crawl like the holder, its `limit` within the plan's cap now; none when the site's crawl is under way. */
    const startRun = (holder: CrawlRow, at: Date) =>
      Effect.gen(function* () {
        const tenant = { workspaceId: holder.workspace_id, environment: holder.environment }
        const workspace = yield* workspaces.find(holder.workspace_id)
        const cap = crawlPageCap[Option.isSome(workspace) ? workspace.value.plan : "free"]
        const run = yield* repo.insert(tenant, {
          id: yield* mint(CrawlId, "crl"),
          agentId: holder.agent_id,
          url: holder.url,
          origin: holder.origin,
          sitemapUrl: holder.sitemap_url,
          keepToPath: holder.keep_to_path,
          limit: Math.min(holder.page_limit, cap),
          at,
          schedule: "off",
          nextRunAt: null,
          scheduledBy: holder.id
        })
        if (Option.isSome(run)) yield* queue.enqueue({
            queue: CRAWL_QUEUE,
            key: holder.origin,
            group: holder.workspace_id,
            payload: { crawlId: run.value.id }
          })
      })

    /** A run's timer is due: the run started (or skipped) and the next one's timer set, in one transaction. */
    const due = (job: Job) =>
      Effect.gen(function* () {
        const timer = decodeTimer(job.payload)
        if (Option.isNone(timer)) return Outcome.failed("the job names no crawl")
        const { at: dueAt, crawlId } = timer.value
        yield* transaction(
          Effect.gen(function* () {
            const holder = yield* repo.lockById(crawlId)
            // a schedule set anew (or off) since this timer was set: another timer is the schedule's
            if (Option.isNone(holder) || holder.value.next_run_at?.toISOString() !== dueAt) return
            const crawl = holder.value
            const at = yield* now
            const tenant = { workspaceId: crawl.workspace_id, environment: crawl.environment }
            if (!(yield* agents.exists(tenant, crawl.agent_id))) {
              return yield* Effect.asVoid(repo.schedule(crawl.id, "off", null, at))
            }
            yield* startRun(crawl, at)
            const next = nextRun(crawl.schedule, new Date(dueAt), at)
            yield* repo.schedule(crawl.id, crawl.schedule, next, at)
            if (next !== null) yield* scheduleRun(queue, crawl.id, next)
          })
        )
        return Outcome.done
      })

    return { due } as const
  }),
  dependencies: [CrawlsRepo.Default, Agents.Default]
}) {}

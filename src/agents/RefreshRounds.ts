/**
 * The agents' knowledge refresh schedules, as the knowledge area's sweep runs them (`knowledge/Freshness.ts`):
 * which agents' rounds are due, how far a round has read, and when the next one is due.
 */
import * as Effect from "effect/Effect"
import { nextRun } from "./Agents.js"
import { AgentsRepo, type DueAgent } from "./AgentsRepo.js"

export type { DueAgent } from "./AgentsRepo.js"

export class RefreshRounds extends Effect.Service<RefreshRounds>()("Agents/RefreshRounds", {
  effect: Effect.map(AgentsRepo, (repo) => ({
    /** Agents whose round is due at `at`, oldest first, each locked until the caller's transaction ends. */
    due: repo.dueForRefresh,
    /** When the earliest round of any agent is due (none: no agent has a schedule). */
    nextDue: repo.nextRefreshDue,
    /** How long a gone page keeps its knowledge, by agent id alone (a deleted agent: the default). */
    goneGraceDays: repo.goneGraceDays,
    /** A round asked for now (or the one due already); none when the tenant has no such agent. */
    startNow: repo.roundNow,
    /** A round's batch queued: it goes on after `seq`. */
    reached: repo.roundReached,
    /** A round read the agent's last source at `at`: the next is due a period on (none while the schedule is off). */
    ended: (agent: DueAgent, at: Date): Effect.Effect<void> =>
      repo.advanceRefresh(agent.id, nextRun(agent.refresh_schedule, agent.refresh_next_at, at))
  })),
  dependencies: [AgentsRepo.Default]
}) {}

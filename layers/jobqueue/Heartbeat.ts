/** The one heartbeat of a worker's running jobs: their leases extended, a job whose lease was lost interrupted. */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type { Job, Primitives } from "../JobQueue.js"
import { makeBackoff, type Outage, outageReason } from "./Outage.js"

/** A job running here, as the heartbeat sees it. */
export interface Held {
  readonly job: Job
  readonly fiber: Fiber.RuntimeFiber<void, never>
  /** Set by the heartbeat when another worker has the job: it is interrupted, not handed back. */
  lost: boolean
}

/**
 * One heartbeat for the jobs running in a worker (not a fiber and a timer per job): every third of the lease, each
 * lease is extended; a job whose lease was lost (another worker claimed it) is interrupted. With no job running it
 * waits for one to start, rather than beating through a Clock's jumps for nothing. A beat whose extension fails
 * (the database away) is not a lost lease: the whole beat is tried again after the backoff (`Outage.ts`), and the
 * jobs go on running meanwhile (a lapsed lease nobody claimed since is still theirs).
 */
export const heartbeat = (
  primitives: Primitives,
  held: Map<string, Held>,
  started: Queue.Queue<void>,
  leaseMillis: number,
  outage: Outage
) =>
  Effect.suspend(() => {
    const beatMillis = Math.max(1, Math.floor(leaseMillis / 3))
    const backoff = makeBackoff()
    let wait = beatMillis
    return Effect.forever(
      Effect.gen(function* () {
        if (held.size === 0) {
          yield* Queue.take(started)
          backoff.reset()
          wait = beatMillis
        }
        yield* Effect.sleep(wait)
        let failure: Cause.Cause<unknown> | undefined
        for (const entry of [...held.values()]) {
          if (held.get(entry.job.id) !== entry) continue
          const kept = yield* Effect.exit(primitives.extend(entry.job, leaseMillis))
          if (Exit.isFailure(kept)) {
            failure ??= kept.cause
            continue
          }
          if (!kept.value && held.get(entry.job.id) === entry) {
            yield* Effect.logWarning(`job ${entry.job.id} lost its lease; another worker has it`)
            entry.lost = true
            yield* Fiber.interruptFork(entry.fiber)
          }
        }
        if (failure === undefined) {
          backoff.reset()
          wait = beatMillis
          return yield* outage.succeeded
        }
        yield* outage.failed(failure, outageReason(failure))
        // never later than the next beat would have been
        wait = Math.min(backoff.next(), beatMillis)
      })
    )
  })


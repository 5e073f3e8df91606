/**
 * The webhook dispatcher moves onto the JobQueue: deliveries pending before it
 * did get one job each (keyed by subscription), due when the delivery was.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    insert into jobs (queue, key, payload, status, run_at, created_at)
    select 'webhooks', subscription_id, json_build_object('deliveryId', id)::text, 'pending', next_attempt_at, created_at
    from webhook_deliveries where status = 'pending' order by created_at, id`
})

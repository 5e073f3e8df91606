/**
 * SQL for the `emails` table, the record of outgoing e-mail: `pending` until a send succeeds (`sent`) or the
 * last attempt fails (`failed`). A settling write touches only a `pending` row: it never resurrects one a
 * duplicate sender already settled. Rows are decoded, not cast.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { WorkspaceId } from "../../schema/Ids.js"
import { decodeOne, execute } from "../db/Sql.js"

export const PendingRow = Schema.Struct({
  id: Schema.String,
  to_address: Schema.String,
  subject: Schema.String,
  body_text: Schema.String,
  body_html: Schema.NullOr(Schema.String),
  attempts: Schema.Int
})
export type PendingRow = typeof PendingRow.Type

export interface EmailInsert {
  readonly id: string
  readonly workspace_id: WorkspaceId | null
  readonly to_address: string
  readonly subject: string
  readonly body_text: string
  readonly body_html: string | null
  readonly created_at: Date
}

export class EmailsRepo extends Effect.Service<EmailsRepo>()("Email/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** A new message, `pending` and due at once. */
    const insert = (row: EmailInsert): Effect.Effect<void> =>
      execute(sql`insert into emails ${sql.insert({ ...row, status: "pending", attempts: 0, next_attempt_at: row.created_at })}`)

    /** The message while it is still `pending` (none: settled, or never written). */
    const pending = (id: string): Effect.Effect<Option.Option<PendingRow>> =>
      decodeOne(PendingRow, sql`
        select id, to_address, subject, body_text, body_html, attempts from emails where id = ${id} and status = 'pending'`)

    const sent = (id: string, attempts: number, at: Date): Effect.Effect<void> =>
      execute(sql`
        update emails set status = 'sent', sent_at = ${at}, attempts = ${attempts}, locked_until = null
        where id = ${id} and status = 'pending'`)

    /** Given up; `attempts` unchanged when none is given (the sender died rather than the mailer refusing). */
    const failed = (id: string, error: string, attempts?: number): Effect.Effect<void> =>
      execute(sql`
        update emails set status = 'failed', last_error = ${error}, locked_until = null
          ${attempts === undefined ? sql.literal("") : sql`, attempts = ${attempts}`}
        where id = ${id} and status = 'pending'`)

    /** An attempt refused: the next one is due at `next`. */
    const retrying = (id: string, attempts: number, error: string, next: Date): Effect.Effect<void> =>
      execute(sql`
        update emails set attempts = ${attempts}, last_error = ${error}, next_attempt_at = ${next}, locked_until = null
        where id = ${id} and status = 'pending'`)

    return { insert, pending, sent, failed, retrying } as const
  })
}) {}

/**
 * SQL for forms and identity secrets, rows decoded with the contract's schemas.
 * Every form query is scoped to one workspace and environment, except the
 * lookup by id alone that CORS preflights need (they carry no key).
 * Database failures are defects from here on.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { Appearance, type Form, FormField, FormId, Settings, Target } from "../../schema/Forms.js"
import { WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute } from "../db/Sql.js"
import { iso } from "../Time.js"

const Localized = Schema.Struct({ es: Schema.optional(Schema.String), en: Schema.optional(Schema.String) })

/** The public part of a form and its target, stored as one JSON document. */
export const Definition = Schema.Struct({
  title: Localized,
  fields: Schema.Array(FormField),
  submit_label: Schema.NullOr(Localized),
  success_message: Schema.NullOr(Localized),
  branding: Schema.Record({ key: Schema.String, value: Schema.String }),
  width: Schema.Union(Schema.Int, Schema.String),
  appearance: Appearance,
  target: Target
})
export type Definition = typeof Definition.Type

export const FormRow = Schema.Struct({
  seq: Schema.String,
  id: FormId,
  workspace_id: WorkspaceId,
  environment: Environment,
  definition: DbJson(Definition),
  settings: DbJson(Settings),
  created_at: DbDate,
  updated_at: DbDate
})
export type FormRow = typeof FormRow.Type

export const toForm = (row: FormRow): Form => ({
  id: row.id,
  object: "form",
  ...row.definition,
  settings: row.settings,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const columns = "seq::text as seq, id, workspace_id, environment, definition, settings, created_at, updated_at"

const SecretRow = Schema.Struct({ sealed: Schema.String, rotated_at: DbDate })

export class FormsRepo extends Effect.Service<FormsRepo>()("Forms/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    const jsonb = (value: unknown) => sql`${JSON.stringify(value)}::text::jsonb`
    const scoped = (t: Tenant) => sql`workspace_id = ${t.workspaceId} and environment = ${t.environment}`

    const insert = (tenant: Tenant, id: FormId, definition: Definition, settings: Settings, at: Date) =>
      decodeSingle(FormRow, sql`
        insert into forms (id, workspace_id, environment, definition, settings, created_at, updated_at)
        values (${id}, ${tenant.workspaceId}, ${tenant.environment}, ${jsonb(definition)}, ${jsonb(settings)}, ${at}, ${at})
        returning ${cols}`)

    const find = (tenant: Tenant, id: FormId) =>
      decodeOne(FormRow, sql`select ${cols} from forms where ${scoped(tenant)} and id = ${id}`)

    /** By id alone: ids are unique across workspaces; for CORS, which must answer before any key is read. */
    const findAnywhere = (id: FormId) => decodeOne(FormRow, sql`select ${cols} from forms where id = ${id}`)

    const page = (tenant: Tenant, request: PageRequest) =>
      decodeAll(FormRow, sql`
        select ${cols} from forms where ${scoped(tenant)}
          ${Option.isSome(request.after) ? sql`and forms.seq < ${request.after.value}::bigint` : sql.literal("")}
        order by forms.seq desc
        limit ${request.limit + 1}`)

    const update = (tenant: Tenant, id: FormId, definition: Definition, settings: Settings, at: Date) =>
      decodeOne(FormRow, sql`
        update forms set definition = ${jsonb(definition)}, settings = ${jsonb(settings)}, updated_at = ${at}
        where ${scoped(tenant)} and id = ${id}
        returning ${cols}`)

    const remove = (tenant: Tenant, id: FormId) =>
      decodeOne(Schema.Struct({ id: FormId }), sql`delete from forms where ${scoped(tenant)} and id = ${id} returning id`).pipe(
        Effect.map(Option.isSome)
      )

    const loadSecret = (tenant: Tenant) =>
      decodeOne(SecretRow, sql`select sealed, rotated_at from identity_secrets where ${scoped(tenant)}`)

    const storeSecret = (tenant: Tenant, sealed: string, at: Date) =>
      execute(sql`
        insert into identity_secrets (workspace_id, environment, sealed, rotated_at)
        values (${tenant.workspaceId}, ${tenant.environment}, ${sealed}, ${at})
        on conflict (workspace_id, environment) do update set sealed = excluded.sealed, rotated_at = excluded.rotated_at`)

    return { insert, find, findAnywhere, page, update, remove, loadSecret, storeSecret } as const
  })
}) {}

/**
 * First start: with an empty database, create the `default` workspace on the
 * free plan with its sandbox keys and print them once. A row in `service_state`
 * claims the bootstrap, so of several instances starting together one does it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CreatedApiKey, Workspace } from "../../schema/Admin.js"
import { ApiKeys } from "../auth/ApiKeys.js"
import { AppConfig } from "../Config.js"
import { transaction } from "../db/Sql.js"
import { now } from "../Time.js"
import { Workspaces } from "./Workspaces.js"

export interface Bootstrapped {
  readonly workspace: Workspace
  readonly secret: CreatedApiKey
  readonly widget: CreatedApiKey
  readonly forms: CreatedApiKey
}

export const bootstrap = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  const keys = yield* ApiKeys
  const config = yield* AppConfig

  const created = yield* Effect.gen(function* () {
    if (!(yield* workspaces.claimBootstrap(yield* now))) return Option.none<Bootstrapped>()
    const workspace = yield* workspaces.create({ name: "default", owner_email: config.ownerEmail, plan: "free" })
    const key = (kind: "secret" | "widget" | "forms") =>
      keys.create({ workspaceId: workspace.id, environment: "test", kind, name: `default ${kind} key` })
    return Option.some<Bootstrapped>({
      workspace,
      secret: yield* key("secret"),
      widget: yield* key("widget"),
      forms: yield* key("forms")
    })
  }).pipe(transaction(sql))

  if (Option.isSome(created) && config.announceKeys) {
    const b = created.value
    yield* Console.log(
      [
        "",
        `Created workspace "default" (${b.workspace.id}, plan free). Sandbox keys, shown this once:`,
        `  secret key  ${b.secret.secret}`,
        `  widget key  ${b.widget.secret}`,
        `  forms key   ${b.forms.secret}`,
        `Console: ${config.publicUrl}/console (sign in with the secret key)`,
        `Try: curl -H "Authorization: Bearer ${b.secret.secret}" ${config.publicUrl}/v1/agents`,
        ""
      ].join("\n")
    )
  }
  return created
}).pipe(Effect.withSpan("Bootstrap.run"))

/** The system endpoints as the composition root uses them: the API group (health, readiness) and the docs and metrics routes. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import { Database } from "../../layers/Database.js"
import { Lifecycle } from "../../layers/Lifecycle.js"
import { isolate } from "../Performance.js"
import { DocsRoutes } from "./Docs.js"
import { SystemHttp } from "./Http.js"
import { MetricsRoutes } from "./Metrics.js"

/** Built with only the services its handlers use (see `Performance.ts`). */
export const ApiGroups = isolate(SqlClient.SqlClient, Database, Lifecycle)(SystemHttp)

export const Routes = Layer.mergeAll(DocsRoutes, MetricsRoutes)

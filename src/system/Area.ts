/** The system endpoints as the composition root uses them: the API group (health, readiness) and the docs and metrics routes. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import { Database } from "../../layers/Database.js"
import { Lifecycle } from "../../layers/Lifecycle.js"
import { DocsRoutes } from "./Docs.js"
import { SystemHttp } from "./Http.js"
import { MetricsRoutes } from "./Metrics.js"

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = SystemHttp
export const ApiServices = [SqlClient.SqlClient, Database, Lifecycle] as const

export const Routes = Layer.mergeAll(DocsRoutes, MetricsRoutes)

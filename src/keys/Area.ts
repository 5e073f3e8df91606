/** The keys area as the composition root uses it: its API group (its programs are built inside it). */
import * as SqlClient from "@effect/sql/SqlClient"
import { Authentication } from "../../schema/Auth.js"
import { ApiKeys } from "../auth/ApiKeys.js"
import { Paginator } from "../http/Pagination.js"
import { KeysHttp } from "./Http.js"

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = KeysHttp
export const ApiServices = [Authentication, ApiKeys, Paginator, SqlClient.SqlClient] as const

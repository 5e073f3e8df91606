/** The keys area as the composition root uses it: its API group (its programs are built inside it). */
import * as SqlClient from "@effect/sql/SqlClient"
import { Authentication } from "../../schema/Auth.js"
import { ApiKeys } from "../auth/ApiKeys.js"
import { Paginator } from "../http/Pagination.js"
import { isolate } from "../Isolate.js"
import { KeysHttp } from "./Http.js"

/** Built with only the services its handlers use (see `Isolate.ts`). */
export const ApiGroups = isolate(Authentication, ApiKeys, Paginator, SqlClient.SqlClient)(KeysHttp)

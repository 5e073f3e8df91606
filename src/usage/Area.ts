/** The usage area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { isolate } from "../Isolate.js"
import { UsageHttp } from "./Http.js"
import { Usage } from "./Usage.js"

export const Live = Usage.Default

/** Built with only the services its handlers use (see `Isolate.ts`). */
export const ApiGroups = isolate(Authentication, Usage)(UsageHttp)

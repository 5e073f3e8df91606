/** The usage area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { UsageHttp } from "./Http.js"
import { Usage } from "./Usage.js"

export const Live = Usage.Default

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = UsageHttp
export const ApiServices = [Authentication, Usage] as const

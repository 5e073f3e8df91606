/** The insights area as the composition root uses it: its programs and its API group. */
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { Agents } from "../agents/Agents.js"
import { InsightsHttp } from "./Http.js"
import { Insights } from "./Insights.js"

export const Live = Insights.Default.pipe(Layer.provide(Agents.Default))

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = InsightsHttp
export const ApiServices = [Authentication, Insights] as const

/** The tickets area as the composition root uses it: its programs (erasure included) and its API group. */
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { Erasure } from "./Erasure.js"
import { TicketsHttp } from "./Http.js"
import { Tickets } from "./Tickets.js"

export const Live = Layer.mergeAll(Tickets.Default, Erasure.Default)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = TicketsHttp
export const ApiServices = [Authentication, Tickets, Erasure] as const

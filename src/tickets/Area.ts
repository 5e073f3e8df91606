/** The tickets area as the composition root uses it: its programs (erasure included) and its API group. */
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { isolate } from "../Isolate.js"
import { Erasure } from "./Erasure.js"
import { TicketsHttp } from "./Http.js"
import { Tickets } from "./Tickets.js"

export const Live = Layer.mergeAll(Tickets.Default, Erasure.Default)

/** Built with only the services its handlers use (see `Isolate.ts`). */
export const ApiGroups = isolate(Authentication, Tickets, Erasure)(TicketsHttp)

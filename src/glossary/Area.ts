/** The glossary area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { Glossary } from "./Glossary.js"
import { GlossaryHttp } from "./Http.js"

export const Live = Glossary.Default

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = GlossaryHttp
export const ApiServices = [Authentication, Glossary] as const

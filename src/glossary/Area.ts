/** The glossary area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { isolate } from "../Performance.js"
import { Glossary } from "./Glossary.js"
import { GlossaryHttp } from "./Http.js"

export const Live = Glossary.Default

/** Built with only the services its handlers use (see `Performance.ts`). */
export const ApiGroups = isolate(Authentication, Glossary)(GlossaryHttp)

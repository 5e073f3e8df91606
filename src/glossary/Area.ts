/** The glossary area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { isolate } from "../Isolate.js"
import { Glossary } from "./Glossary.js"
import { GlossaryHttp } from "./Http.js"

export const Live = Glossary.Default

/** Built with only the services its handlers use (see `Isolate.ts`). */
export const ApiGroups = isolate(Authentication, Glossary)(GlossaryHttp)

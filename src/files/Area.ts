/** The files area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { isolate } from "../Isolate.js"
import { Files } from "./Files.js"
import { FilesHttp } from "./Http.js"

export const Live = Files.Default

/** Built with only the services its handlers use (see `Isolate.ts`). */
export const ApiGroups = isolate(Authentication, IdGenerator, Files)(FilesHttp)

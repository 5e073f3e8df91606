/** The files area as the composition root uses it: its programs and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Files } from "./Files.js"
import { FilesHttp } from "./Http.js"

export const Live = Files.Default

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = FilesHttp
export const ApiServices = [Authentication, IdGenerator, Files] as const

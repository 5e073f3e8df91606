/**
 * The training area as the composition root uses it: its programs, its API group, and the knowledge
 * pipeline's `SourceOwner` port (a lesson's source reports through this area).
 */
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Course } from "./Course.js"
import { TrainingHttp } from "./Http.js"
import { LessonSources } from "./LessonSources.js"
import { LessonSourceOwner } from "./Outcome.js"

export const Live = Layer.mergeAll(Course.Default, LessonSources.Default)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = TrainingHttp
export const ApiServices = [Authentication, IdGenerator, Course, LessonSources] as const

export const SourceOwnerLive = LessonSourceOwner

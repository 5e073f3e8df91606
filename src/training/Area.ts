/**
 * The training area as the composition root uses it: its programs, its API group, and the knowledge
 * pipeline's `SourceOwner` port (a lesson's source reports through this area).
 */
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { isolate } from "../Performance.js"
import { Course } from "./Course.js"
import { TrainingHttp } from "./Http.js"
import { LessonSources } from "./LessonSources.js"
import { LessonSourceOwner } from "./Outcome.js"

export const Live = Layer.mergeAll(Course.Default, LessonSources.Default)

/** Built with only the services its handlers use (see `Performance.ts`). */
export const ApiGroups = isolate(Authentication, IdGenerator, Course, LessonSources)(TrainingHttp)

export const SourceOwnerLive = LessonSourceOwner

/** Helpers of the training suites: training agents, modules, lessons and lesson sources through the real server. */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { eventually } from "../support/eventually.js"
import type { HarnessShape } from "../support/harness.js"

export const trainingAgent = (h: HarnessShape, key: string, name = "Onboarding course") =>
  Effect.map(h.call("POST", "/v1/agents", { key, body: { type: "training", name } }), (r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.data.id as string
  })

const created = (r: { status: number; body: any }) => {
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body.data
}

export const addModule = (h: HarnessShape, key: string, agentId: string, body: Record<string, unknown>) =>
  Effect.map(h.call("POST", `/v1/agents/${agentId}/modules`, { key, body }), created)

export const addLesson = (h: HarnessShape, key: string, agentId: string, body: Record<string, unknown>) =>
  Effect.map(h.call("POST", `/v1/agents/${agentId}/lessons`, { key, body }), created)

export const addSource = (h: HarnessShape, key: string, agentId: string, body: Record<string, unknown>) =>
  Effect.map(h.call("POST", `/v1/agents/${agentId}/sources`, { key, body }), created)

/** A training agent with one module holding one lesson. */
export const course = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* trainingAgent(h, key)
    const module = yield* addModule(h, key, agentId, { title: "Basics" })
    const lesson = yield* addLesson(h, key, agentId, { module_id: module.id, title: "Getting started" })
    return { agentId, moduleId: module.id as string, lessonId: lesson.id as string }
  })

export const listSources = (h: HarnessShape, key: string, agentId: string, lessonId: string) =>
  Effect.map(h.call("GET", `/v1/agents/${agentId}/sources?lesson_id=${lessonId}`, { key }), (r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body.data as Array<any>
  })

/** Polls until every source of the lesson is indexed or failed (bounded). */
export const settledSources = (h: HarnessShape, key: string, agentId: string, lessonId: string, tries = 3000) =>
  eventually(
    listSources(h, key, agentId, lessonId),
    (sources) => sources.every((s) => s.status === "indexed" || s.status === "failed"),
    { tries, label: "lesson sources settled" }
  )

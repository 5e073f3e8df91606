/**
 * Form management: create, list, read, change and delete forms. A definition is
 * checked as a whole (unique field ids, options only on selects, patterns that
 * compile and cannot backtrack catastrophically, a target agent that exists)
 * before anything is stored.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { PageParams } from "../../schema/Envelope.js"
import { ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import { type CreateForm, FormId, type FormFieldInput, type TargetInput, type UpdateForm } from "../../schema/Forms.js"
import type { Tenant } from "../../schema/Tenant.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Agents } from "../agents/Agents.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { now } from "../Time.js"
import { type Definition, FormsRepo, toForm } from "./FormsRepo.js"
import { defaultSettings, fieldProblems, mergeSettings, toField } from "./Rules.js"

export const missingForm = (id: FormId, param = "id") =>
  new ResourceMissing({ message: `No such form: '${id}'`, param })

export class Forms extends Effect.Service<Forms>()("Forms/Programs", {
  effect: Effect.gen(function* () {
    const repo = yield* FormsRepo
    const agents = yield* Agents
    const ids = yield* IdGenerator
    const pages = yield* Paginator

    const checkFields = (fields: ReadonlyArray<FormFieldInput>, honeypot: string | null) => {
      const problems = fieldProblems(fields, honeypot)
      const first = problems[0]
      return first === undefined ? Effect.void : Effect.fail(new ParameterInvalid(first))
    }

    const checkTarget = (tenant: Tenant, target: TargetInput) =>
      Effect.gen(function* () {
        const agentId = target.agent_id ?? null
        if (agentId !== null && !(yield* agents.exists(tenant, agentId))) {
          return yield* new ResourceMissing({ message: `No such agent: '${agentId}'`, param: "target.agent_id" })
        }
        return { type: target.type, agent_id: agentId }
      })

    const create = Effect.fn("Forms.create")(function* (tenant: Tenant, input: CreateForm) {
      const settings = mergeSettings(defaultSettings, input.settings)
      yield* checkFields(input.fields, settings.honeypot_field)
      const definition: Definition = {
        title: input.title,
        fields: input.fields.map(toField),
        submit_label: input.submit_label ?? null,
        success_message: input.success_message ?? null,
        branding: input.branding ?? {},
        width: input.width ?? "fluid",
        appearance: input.appearance ?? "card",
        target: yield* checkTarget(tenant, input.target)
      }
      const id = FormId.make(yield* ids.make("frm"))
      return toForm(yield* repo.insert(tenant, id, definition, settings, yield* now))
    })

    const list = Effect.fn("Forms.list")(function* (tenant: Tenant, params: PageParams) {
      const page = yield* pages.parse("forms", params)
      const { rows, pagination } = toPage(yield* repo.page(tenant, page), page)
      return { forms: rows.map(toForm), pagination }
    })

    const retrieve = Effect.fn("Forms.retrieve")(function* (tenant: Tenant, id: FormId) {
      const row = yield* repo.find(tenant, id)
      return Option.isSome(row) ? toForm(row.value) : yield* missingForm(id)
    })

    const update = Effect.fn("Forms.update")(function* (tenant: Tenant, id: FormId, input: UpdateForm) {
      const found = yield* repo.find(tenant, id)
      if (Option.isNone(found)) return yield* missingForm(id)
      const before = found.value
      const settings = mergeSettings(before.settings, input.settings)
      if (input.fields !== undefined) yield* checkFields(input.fields, settings.honeypot_field)
      else if (settings.honeypot_field !== null && before.definition.fields.some((f) => f.id === settings.honeypot_field)) {
        return yield* new ParameterInvalid({
          message: `'${settings.honeypot_field}' is a field of this form; the honeypot needs another name`,
          param: "settings.honeypot_field"
        })
      }
      const d = before.definition
      const definition: Definition = {
        title: input.title ?? d.title,
        fields: input.fields !== undefined ? input.fields.map(toField) : d.fields,
        submit_label: input.submit_label !== undefined ? input.submit_label : d.submit_label,
        success_message: input.success_message !== undefined ? input.success_message : d.success_message,
        branding: input.branding ?? d.branding,
        width: input.width ?? d.width,
        appearance: input.appearance ?? d.appearance,
        target: input.target !== undefined ? yield* checkTarget(tenant, input.target) : d.target
      }
      const row = yield* repo.update(tenant, id, definition, settings, yield* now)
      return Option.isSome(row) ? toForm(row.value) : yield* missingForm(id)
    })

    const remove = Effect.fn("Forms.delete")(function* (tenant: Tenant, id: FormId) {
      if (!(yield* repo.remove(tenant, id))) return yield* missingForm(id)
      return { id, object: "form" as const, deleted: true as const }
    })

    return { create, list, retrieve, update, remove } as const
  }),
  dependencies: [FormsRepo.Default, Agents.Default]
}) {}

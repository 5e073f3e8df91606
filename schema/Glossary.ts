/**
 * Glossary: an agent's terms, each with a definition (fed to answers) and
 * synonyms (fed to retrieval's query expansion). Terms are unique per agent
 * regardless of case; `{term}` in a path is the term, percent-encoded.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Envelope, Timestamp } from "./Envelope.js"
import { ApiError, ParameterInvalid, ResourceMissing, TermExists } from "./Errors.js"
import { AgentId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Most terms one agent's glossary holds. */
export const maxTerms = 1000

export const Term = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "term must not be empty" }),
  Schema.maxLength(100, { message: () => "term must be at most 100 characters" })
).annotations({ description: "1 to 100 characters; unique in the agent's glossary regardless of case" })

const Definition = Schema.Trim.pipe(
  Schema.maxLength(2_000, { message: () => "definition must be at most 2000 characters" })
)
const Synonym = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "a synonym must not be empty" }),
  Schema.maxLength(100, { message: () => "a synonym must be at most 100 characters" })
)
const Synonyms = Schema.Array(Synonym).pipe(
  Schema.maxItems(50, { message: () => "at most 50 synonyms per term" })
)

export const GlossaryTerm = Schema.Struct({
  object: Schema.Literal("glossary_term"),
  term: Schema.String,
  definition: Schema.NullOr(Schema.String),
  synonyms: Schema.Array(Schema.String),
  case_sensitive: Schema.Boolean.annotations({ description: "Match the term (and its synonyms) only with this case" }),
  enabled: Schema.Boolean.annotations({ description: "Disabled terms are kept but not used in answers or retrieval" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "GlossaryTerm" })
export type GlossaryTerm = typeof GlossaryTerm.Type

export const Glossary = Schema.Struct({
  object: Schema.Literal("glossary"),
  agent_id: AgentId,
  terms: Schema.Array(GlossaryTerm).annotations({ description: "In alphabetical order, ignoring case" })
}).annotations({ identifier: "Glossary" })
export type Glossary = typeof Glossary.Type

export const CreateTerm = StrictStruct({
  term: Term,
  definition: Schema.optional(Schema.NullOr(Definition)),
  synonyms: Schema.optional(Synonyms).annotations({ description: "Default: none" }),
  case_sensitive: Schema.optional(Schema.Boolean).annotations({ description: "Default: false" }),
  enabled: Schema.optional(Schema.Boolean).annotations({ description: "Default: true" })
}).annotations({ identifier: "CreateGlossaryTerm" })
export type CreateTerm = typeof CreateTerm.Type

export const ReplaceGlossary = StrictStruct({
  terms: Schema.Array(CreateTerm).pipe(
    Schema.maxItems(maxTerms, { message: () => `a glossary holds at most ${maxTerms} terms` })
  )
}).annotations({ identifier: "ReplaceGlossary" })
export type ReplaceGlossary = typeof ReplaceGlossary.Type

export const UpdateTerm = StrictStruct({
  definition: Schema.optional(Schema.NullOr(Definition)).annotations({ description: "null clears it" }),
  synonyms: Schema.optional(Synonyms).annotations({ description: "Replaces the whole list" }),
  case_sensitive: Schema.optional(Schema.Boolean),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "UpdateGlossaryTerm" })
export type UpdateTerm = typeof UpdateTerm.Type

export const DeletedTerm = Schema.Struct({
  object: Schema.Literal("glossary_term"),
  term: Schema.String,
  deleted: Schema.Literal(true)
}).annotations({ identifier: "DeletedGlossaryTerm" })

const idPath = HttpApiSchema.param("id", AgentId)
const termPath = HttpApiSchema.param(
  "term",
  Schema.String.annotations({ description: "The term, percent-encoded; matched regardless of case" })
)
const missing = ApiError(ResourceMissing)


export class GlossaryGroup extends HttpApiGroup.make("glossary")
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${idPath}/glossary`
      .addSuccess(Envelope(Glossary))
      .addError(missing)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(
        OpenApi.Description,
        "`{object: \"glossary\", agent_id, terms}`, terms in alphabetical order ignoring case"
      )
      .annotate(OpenApi.Summary, "Read an agent's glossary")
  )
  .add(
    HttpApiEndpoint.put("replace")`/v1/agents/${idPath}/glossary`
      .setPayload(ReplaceGlossary)
      .addSuccess(Envelope(Glossary))
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `terms` (at most 1000 term objects as for `POST /terms`); replaces the whole list, all or " +
          "nothing"
      )
      .annotate(OpenApi.Summary, "Replace the whole glossary at once (all or nothing)")
  )
  .add(
    HttpApiEndpoint.post("addTerm")`/v1/agents/${idPath}/glossary/terms`
      .setPayload(CreateTerm)
      .addSuccess(Envelope(GlossaryTerm), { status: 201 })
      .addError(missing)
      .addError(ApiError(TermExists))
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `term` (1–100), optional `definition` (null), `synonyms` (up to 50, default none), " +
          "`case_sensitive` (false), `enabled` (true); `201`; `409 term_exists` when the glossary holds the " +
          "term in any case"
      )
      .annotate(OpenApi.Summary, "Add a term; 409 term_exists when the glossary holds it in any case")
  )
  .add(
    HttpApiEndpoint.patch("updateTerm")`/v1/agents/${idPath}/glossary/terms/${termPath}`
      .setPayload(UpdateTerm)
      .addSuccess(Envelope(GlossaryTerm))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "`definition` (null clears), `synonyms` (replaces the list), `case_sensitive`, `enabled`; the term " +
          "itself cannot be renamed (delete and add)"
      )
      .annotate(OpenApi.Summary, "Change a term's definition, synonyms, case_sensitive or enabled")
  )
  .add(
    HttpApiEndpoint.del("deleteTerm")`/v1/agents/${idPath}/glossary/terms/${termPath}`
      .addSuccess(Envelope(DeletedTerm))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Description, "`{object: \"glossary_term\", term, deleted: true}`")
      .annotate(OpenApi.Summary, "Remove a term")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("glossary"))
  .annotate(OpenApi.Title, "Glossary") {}

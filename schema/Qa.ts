/**
 * Q&A and categories: the question/answer pairs an agent answers from, written
 * by hand (`manual`), imported from CSV (`csv`) or drawn from its sources by the
 * AI pipeline (`generated`), filed under ordered categories.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { ApiError, CategoryExists, InvalidCursor, InvalidLimit, ParameterInvalid, ResourceMissing } from "./Errors.js"
import { AgentId, CategoryId, QaId, SourceId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Most categories one agent holds. */
export const maxCategories = 100

export const QaOrigin = Schema.Literal("manual", "generated", "csv").annotations({
  description: "`manual`: written through the API; `generated`: drawn from a source by the AI pipeline; `csv`: imported"
})
export type QaOrigin = typeof QaOrigin.Type

const Question = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "question must not be empty" }),
  Schema.maxLength(1_000, { message: () => "question must be at most 1000 characters" })
)
const Answer = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "answer must not be empty" }),
  Schema.maxLength(10_000, { message: () => "answer must be at most 10000 characters" })
)
const CategoryName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(100, { message: () => "name must be at most 100 characters" })
)
const CategoryDescription = Schema.Trim.pipe(
  Schema.maxLength(1_000, { message: () => "description must be at most 1000 characters" })
)
const Position = Schema.Int.pipe(
  Schema.between(0, maxCategories - 1, {
    message: () => `position must be an integer from 0 to ${maxCategories - 1}`
  })
).annotations({ description: "0-based place in the agent's order; a larger one than the list has puts it last" })

export const Qa = Schema.Struct({
  id: QaId,
  object: Schema.Literal("qa"),
  agent_id: AgentId,
  question: Schema.String,
  answer: Schema.String,
  category_id: Schema.NullOr(CategoryId),
  origin: QaOrigin,
  source_id: Schema.NullOr(SourceId).annotations({ description: "The knowledge source it came from, if any" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Qa" })
export type Qa = typeof Qa.Type

export const CreateQa = StrictStruct({
  question: Question,
  answer: Answer,
  category_id: Schema.optional(Schema.NullOr(CategoryId)).annotations({ description: "Default: uncategorised" })
}).annotations({ identifier: "CreateQa" })
export type CreateQa = typeof CreateQa.Type

export const UpdateQa = StrictStruct({
  question: Schema.optional(Question),
  answer: Schema.optional(Answer),
  category_id: Schema.optional(Schema.NullOr(CategoryId)).annotations({ description: "null: uncategorised" })
}).annotations({
  identifier: "UpdateQa",
  description: "Editing the question or answer of a `generated` Q&A makes it `manual`, so regeneration keeps it"
})
export type UpdateQa = typeof UpdateQa.Type

export const QaListParams = Schema.Struct({
  ...PageParams.fields,
  category_id: Schema.optional(Schema.Union(CategoryId, Schema.Literal("none"))).annotations({
    description: "Only this category's Q&A; `none` for the uncategorised ones"
  }),
  origin: Schema.optional(QaOrigin)
})
export type QaListParams = typeof QaListParams.Type

export const Category = Schema.Struct({
  id: CategoryId,
  object: Schema.Literal("category"),
  agent_id: AgentId,
  name: Schema.String,
  description: Schema.String,
  position: Schema.Int.annotations({ description: "0-based; the agent's categories are numbered 0..n-1" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Category" })
export type Category = typeof Category.Type

export const CreateCategory = StrictStruct({
  name: CategoryName,
  description: Schema.optional(CategoryDescription).annotations({ description: "Default: empty" }),
  position: Schema.optional(Position).annotations({ description: "Default: last" })
}).annotations({ identifier: "CreateCategory" })
export type CreateCategory = typeof CreateCategory.Type

export const UpdateCategory = StrictStruct({
  name: Schema.optional(CategoryName),
  description: Schema.optional(CategoryDescription),
  position: Schema.optional(Position).annotations({ description: "Moves it there; the others close up around it" })
}).annotations({ identifier: "UpdateCategory" })
export type UpdateCategory = typeof UpdateCategory.Type

export const QaRegeneration = Schema.Struct({
  object: Schema.Literal("qa_regeneration"),
  agent_id: AgentId,
  status: Schema.Literal("queued").annotations({
    description: "The rebuild runs in the background; `qa.regenerated` reports its end"
  })
}).annotations({ identifier: "QaRegeneration" })
export type QaRegeneration = typeof QaRegeneration.Type

const idPath = HttpApiSchema.param("id", AgentId)
const qaPath = HttpApiSchema.param("qa_id", QaId)
const categoryPath = HttpApiSchema.param("category_id", CategoryId)
const missing = ApiError(ResourceMissing)


export class QaGroup extends HttpApiGroup.make("qa")
  .add(
    HttpApiEndpoint.post("create")`/v1/agents/${idPath}/qa`
      .setPayload(CreateQa)
      .addSuccess(Envelope(Qa), { status: 201 })
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `question` (1–1000 characters), `answer` (1–10000), optional `category_id` (a category of this " +
          "agent, or null); `201`; origin `manual`"
      )
      .annotate(OpenApi.Summary, "Add a Q&A (origin `manual`)")
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/agents/${idPath}/qa`
      .setUrlParams(QaListParams)
      .addSuccess(ListEnvelope(Qa))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:knowledge")
      .annotate(
        OpenApi.Description,
        "Paginated, newest first; `category_id` (`cat_…`, or `none` for uncategorised), `origin` (`manual`, " +
          "`generated`, `csv`)"
      )
      .annotate(OpenApi.Summary, "List an agent's Q&A, newest first; filters `category_id`, `origin`")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/agents/${idPath}/qa/${qaPath}`
      .setPayload(UpdateQa)
      .addSuccess(Envelope(Qa))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Description, "`question`, `answer`, `category_id` (null: uncategorised)")
      .annotate(OpenApi.Summary, "Change a Q&A's question, answer or category")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/agents/${idPath}/qa/${qaPath}`
      .addSuccess(Envelope(Deleted(QaId, "qa")))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Description, "Removes it; a second `DELETE` is `404`")
      .annotate(OpenApi.Summary, "Delete a Q&A")
  )
  .add(
    HttpApiEndpoint.post("regenerate")`/v1/agents/${idPath}/qa/regenerate`
      .addSuccess(Envelope(QaRegeneration), { status: 202 })
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "No body; `202` with `{object: \"qa_regeneration\", agent_id, status: \"queued\"}`; the rebuild runs in " +
          "the background and ends with the event `qa.regenerated` (`agent_id`, `qa_count`)"
      )
      .annotate(
        OpenApi.Summary,
        "Rebuild the generated Q&A from the agent's indexed sources (manual and CSV ones are kept); then `qa.regenerated`"
      )
  )
  .add(
    HttpApiEndpoint.post("createCategory")`/v1/agents/${idPath}/categories`
      .setPayload(CreateCategory)
      .addSuccess(Envelope(Category), { status: 201 })
      .addError(missing)
      .addError(ApiError(CategoryExists))
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `name` (1–100), optional `description` (default empty), `position` (0–99; default last); `201`"
      )
      .annotate(OpenApi.Summary, "Add a category, last or at `position`")
  )
  .add(
    HttpApiEndpoint.get("listCategories")`/v1/agents/${idPath}/categories`
      .addSuccess(ListEnvelope(Category))
      .addError(missing)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Description, "Every category of the agent in `position` order, in one page (`has_more: false`)")
      .annotate(OpenApi.Summary, "Every category of the agent, in position order (one page)")
  )
  .add(
    HttpApiEndpoint.patch("updateCategory")`/v1/agents/${idPath}/categories/${categoryPath}`
      .setPayload(UpdateCategory)
      .addSuccess(Envelope(Category))
      .addError(missing)
      .addError(ApiError(CategoryExists))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Description, "`name`, `description`, `position` (moves it; the others close up around it)")
      .annotate(OpenApi.Summary, "Rename, describe or move a category")
  )
  .add(
    HttpApiEndpoint.del("deleteCategory")`/v1/agents/${idPath}/categories/${categoryPath}`
      .addSuccess(Envelope(Deleted(CategoryId, "category")))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Its Q&A stay, uncategorised (`category_id: null`); later positions move up by one"
      )
      .annotate(OpenApi.Summary, "Delete a category; its Q&A stay, uncategorised")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("qa"))
  .annotate(OpenApi.Title, "Q&A and categories") {}

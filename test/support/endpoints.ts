/**
 * Every endpoint of the contract, read from `Api` by reflection: what it
 * requires of the caller's key, the kind of each path parameter (the brand of
 * its id schema) and whether its body and query decode from nothing. The
 * security matrix walks this list, so an endpoint added to `Api` is in it.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Arbitrary from "effect/Arbitrary"
import * as Context from "effect/Context"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { Api } from "../../schema/Api.js"
import { Authentication, RequiredScope, type Scope, WidgetScope } from "../../schema/Auth.js"

export interface PathParam {
  readonly name: string
  /** The brand of its id schema (`AgentId`), or `param:<name>` for an unbranded one (a glossary term). */
  readonly kind: string
  /** A well-formed value no object has: for checks that happen before any lookup. */
  readonly unknown: string
}

export interface ContractEndpoint {
  /** `group.endpoint`, as the typed client names it (`agents.retrieve`). */
  readonly id: string
  readonly method: string
  /** The route pattern: `/v1/agents/:id`. */
  readonly path: string
  readonly authenticated: boolean
  readonly scope: Option.Option<Scope>
  readonly widgetScope: Option.Option<Scope>
  readonly params: ReadonlyArray<PathParam>
  /** Whether it takes a body. */
  readonly hasBody: boolean
  /** Whether `{}` is a valid body (or it takes none). */
  readonly bodyOptional: boolean
  /** Whether a request without a query string decodes. */
  readonly queryOptional: boolean
  /** `METHOD /path`, for messages. */
  readonly label: string
}

const kindOf = (name: string, ast: AST.AST): string => {
  const brand = AST.getBrandAnnotation(ast)
  if (Option.isSome(brand) && brand.value.length > 0) return String(brand.value[0])
  return `param:${name}`
}

const unknownValue = (schema: Schema.Schema.Any, index: number): string => {
  const [value] = FastCheck.sample(
    Arbitrary.make(schema).filter((v) => typeof v === "string" && v.trim() !== "" && !v.includes("/")),
    { numRuns: 1, seed: 7 + index }
  )
  return String(value)
}

/** What is read of a schema here: its AST. */
type HasAst = Option.Option<{ readonly ast: AST.AST }>

const paramsOf = (pathSchema: HasAst): ReadonlyArray<PathParam> => {
  if (Option.isNone(pathSchema)) return []
  const ast = AST.typeAST(pathSchema.value.ast)
  if (!AST.isTypeLiteral(ast)) return []
  return ast.propertySignatures.map((ps, i) => ({
    name: String(ps.name),
    kind: kindOf(String(ps.name), ps.type),
    unknown: unknownValue(Schema.make(ps.type), i)
  }))
}

const decodesFromNothing = (schema: HasAst, nothing: unknown) =>
  Option.match(schema, {
    onNone: () => true,
    onSome: (s) => Schema.is(Schema.make(AST.typeAST(s.ast)))(nothing)
  })

const collect = (): ReadonlyArray<ContractEndpoint> => {
  const out: Array<ContractEndpoint> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      out.push({
        id: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        path: endpoint.path,
        authenticated: middleware.has(Authentication as never),
        scope: Context.getOption(mergedAnnotations, RequiredScope),
        widgetScope: Context.getOption(mergedAnnotations, WidgetScope),
        params: paramsOf(endpoint.pathSchema),
        hasBody: Option.isSome(endpoint.payloadSchema),
        bodyOptional: decodesFromNothing(endpoint.payloadSchema, {}),
        queryOptional: decodesFromNothing(endpoint.urlParamsSchema, {}),
        label: `${endpoint.method} ${endpoint.path}`
      })
    }
  })
  return out
}

export const contractEndpoints: ReadonlyArray<ContractEndpoint> = collect()

/** The path of `endpoint` with each parameter replaced by `valueOf(param)` (URL-encoded). */
export const fillPath = (endpoint: ContractEndpoint, valueOf: (param: PathParam) => string): string =>
  endpoint.params.reduce(
    (path, param) => path.replace(`:${param.name}`, encodeURIComponent(valueOf(param))),
    endpoint.path
  )

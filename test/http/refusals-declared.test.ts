import { describe, expect, it } from "@effect/vitest"
import type * as AST from "effect/SchemaAST"
import * as SchemaAST from "effect/SchemaAST"
import { Api } from "../../schema/Api.js"
import { ApiError, ErrorCatalog, ExpectationFailed, HeadersTooLarge } from "../../schema/Errors.js"

/** Failures answered on the raw socket before any request reaches the API (`src/http/Refusals.ts`, `NodeServer.ts`). */
const beforeTheApi = new Set<unknown>([HeadersTooLarge, ExpectationFailed])

/** The error schemas the API declares anywhere: on itself, a group or an endpoint. */
const declared = (): ReadonlySet<AST.AST> => {
  const found = new Set<AST.AST>()
  const visit = (ast: AST.AST): void => {
    if (SchemaAST.isUnion(ast)) ast.types.forEach(visit)
    else found.add(ast)
  }
  visit(Api.errorSchema.ast)
  for (const group of Object.values(Api.groups)) {
    visit(group.errorSchema.ast)
    for (const endpoint of Object.values(group.endpoints)) visit(endpoint.errorSchema.ast)
  }
  return found
}

describe("the catalog and the API", () => {
  it("every failure the edge or a handler can give is declared on some endpoint, so the platform can encode it", () => {
    const schemas = declared()
    const undeclared = ErrorCatalog.filter((cls) => !beforeTheApi.has(cls) && !schemas.has(ApiError(cls).ast)).map((cls) => cls._tag)
    expect(undeclared).toEqual([])
  })
})

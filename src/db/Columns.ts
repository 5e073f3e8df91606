/** Schemas of column values as the drivers hand them over, shared by the repositories' row schemas. */
import * as Schema from "effect/Schema"

/** `timestamptz`: a Date from node-postgres and PGlite, tolerated as ISO text. */
export const DbDate = Schema.Union(Schema.DateFromSelf, Schema.Date)

/** `jsonb`: parsed by both drivers, tolerated as text. */
export const DbJson = <A, I>(schema: Schema.Schema<A, I>) => Schema.Union(schema, Schema.parseJson(schema))

/** Column values as the drivers hand them over and take them, shared by the repositories. */
import * as Schema from "effect/Schema"

/** `timestamptz`: a Date from node-postgres and PGlite, tolerated as ISO text. */
export const DbDate = Schema.Union(Schema.DateFromSelf, Schema.Date)

/** `jsonb`: parsed by both drivers, tolerated as text. */
export const DbJson = <A, I>(schema: Schema.Schema<A, I>) => Schema.Union(schema, Schema.parseJson(schema))

/** A `real[]` as a PostgreSQL array literal (`{0.1,-2e-7}`): one parameter for a whole vector, on both drivers. */
export const realArrayLiteral = (values: ReadonlyArray<number>): string => `{${values.join(",")}}`

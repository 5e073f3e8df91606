/** New ids of a branded kind: minted with the prefix, then checked by the id's own schema (no brand casts). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { IdPrefix } from "../schema/Ids.js"
import { IdGenerator } from "../layers/IdGenerator.js"

export const mint = <A extends string>(schema: Schema.Schema<A, string>, prefix: IdPrefix) =>
  Effect.flatMap(IdGenerator, (ids) => ids.make(prefix)).pipe(Effect.flatMap(Schema.decode(schema)), Effect.orDie)

import * as Schema from "effect/Schema"

/**
 * A request body that refuses parameters it does not know, as Stripe does:
 * a typo such as `nmae` is a `400 parameter_invalid` naming it, not silently dropped.
 */
export const StrictStruct = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

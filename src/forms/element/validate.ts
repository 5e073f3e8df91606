/**
 * Client-side checks mirroring the server's (required, lengths, e-mail shape,
 * select options, pattern), so a person sees mistakes before anything is sent.
 * The server checks again; its 400 `field_errors` are shown the same way.
 */
import type { ConfigField, FieldValue } from "./api.js"
import type { Texts } from "./texts.js"

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** The server never runs a pattern on a longer value either. */
const maxPatternInput = 2_000

/** The whole-value matcher of a pattern (flag `v`, else `u` in older browsers); undefined leaves it to the server. */
const compile = (pattern: string): RegExp | undefined => {
  for (const flag of ["v", "u"]) {
    try {
      return new RegExp(`^(?:${pattern})$`, flag)
    } catch {
      // try the next flag
    }
  }
  return undefined
}

/** The error message for one field's value, or undefined when it is fine. */
export const checkField = (field: ConfigField, raw: FieldValue | undefined, t: Texts): string | undefined => {
  if (field.type === "checkbox") return field.required && raw !== true ? t.mustCheck : undefined
  const value = typeof raw === "string" ? raw.trim() : ""
  if (value === "") return field.required ? t.required : undefined
  if (field.max_length !== null && value.length > field.max_length) return t.tooLong(field.max_length)
  if (field.min_length !== null && value.length < field.min_length) return t.tooShort(field.min_length)
  if (field.type === "email" && (value.length > 320 || !emailShape.test(value))) return t.email
  if (field.type === "select" && !(field.options ?? []).some((o) => o.value === value)) return t.option
  if (field.pattern !== null && value.length <= maxPatternInput) {
    const regex = compile(field.pattern)
    if (regex !== undefined && !regex.test(value)) return t.pattern
  }
  return undefined
}

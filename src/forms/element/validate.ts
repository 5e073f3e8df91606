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

/**
 * Whether the browser's backtracking `RegExp` runs `pattern` in time linear in
 * the value: no alternation, no quantified group, at most one quantifier with a
 * choice (`*`, `+`, `?`, `{n,m}`), so a match tries at most one split per
 * position. Any other pattern is left to the server, whose engine is linear for
 * every pattern: a hostile one must not freeze the visitor's page.
 */
const linearForBacktracking = (pattern: string): boolean => {
  let choices = 0
  let depth = 0
  let previous = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === "\\") {
      i++
      previous = "atom"
      continue
    }
    if (depth > 0) {
      if (c === "[") depth++
      else if (c === "]") depth--
      previous = "atom"
      continue
    }
    if (c === "[") depth++
    else if (c === "|") return false
    else if (c === "*" || c === "+" || (c === "?" && previous !== "(" && previous !== "quantifier")) {
      if (previous === ")") return false
      choices++
      previous = "quantifier"
      continue
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
      if (m !== null) {
        if (previous === ")") return false
        if (m[2] !== undefined && m[3] !== m[1]) choices++
        i += m[0].length - 1
        previous = "quantifier"
        continue
      }
    }
    previous = c === "(" || c === ")" ? c : "atom"
  }
  return choices <= 1
}

/** The whole-value matcher of a pattern (flag `v`, the contract's language); undefined leaves it to the server. */
const compile = (pattern: string): RegExp | undefined => {
  if (!linearForBacktracking(pattern)) return undefined
  try {
    return new RegExp(`^(?:${pattern})$`, "v")
  } catch {
    // a browser without flag `v`: flag `u` would read some classes otherwise
    return undefined
  }
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

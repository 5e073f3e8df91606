/** A job's failure in one short line: what `last_error` keeps and the log says. */
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"

const maxReasonLength = 200

const textOf = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null) {
    const tag = "_tag" in value && typeof value._tag === "string" ? value._tag : value instanceof Error ? value.name : undefined
    const message = "message" in value && typeof value.message === "string" ? value.message : undefined
    if (tag !== undefined || message !== undefined) return [tag, message].filter((p) => p !== undefined && p !== "").join(": ")
  }
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * A failure in one short line, for `last_error` and the log: the first error's own text, or the defect's after
 * `died:` (`died: TypeError: x is not a function`); never a stack.
 */
export const shortCause = (cause: Cause.Cause<unknown>): string => {
  const text = Option.match(Cause.failureOption(cause), {
    onSome: textOf,
    onNone: () =>
      Option.match(Cause.dieOption(cause), {
        onSome: (defect) => `died: ${textOf(defect)}`,
        onNone: () => (Cause.isInterrupted(cause) ? "interrupted" : Cause.pretty(cause))
      })
  })
  const line = (text.split("\n")[0] ?? "").trim()
  return line.length > maxReasonLength ? `${line.slice(0, maxReasonLength - 1)}…` : line
}

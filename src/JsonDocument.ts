/** Rewriting stored JSON documents (event bodies, replayable responses) object by object. */
import * as Option from "effect/Option"

/**
 * A copy of the JSON document `text` in which `edit` ran on a copy of every
 * object in it (children before their parent); `edit` changes the object in
 * place and answers whether it changed anything. None when nothing changed or
 * the text is not JSON.
 */
export const editObjects = (text: string, edit: (object: Record<string, unknown>) => boolean): Option.Option<string> => {
  let changed = false
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk)
    if (typeof value !== "object" || value === null) return value
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = walk(v)
    if (edit(out)) changed = true
    return out
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Option.none()
  }
  const edited = walk(parsed)
  return changed ? Option.some(JSON.stringify(edited)) : Option.none()
}

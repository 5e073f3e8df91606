/**
 * Splits a document into retrieval chunks: whole blocks (paragraphs, headings
 * with what follows) packed up to a size, a block longer than that cut at
 * sentence ends. Each chunk repeats its section heading so it reads alone.
 *
 * The work is a generator, so that `chunkInSteps` can hand the event loop back
 * between steps: a document of megabytes is a second of it, which in one piece
 * would hold up every request of the service.
 */
import * as Effect from "effect/Effect"

const maxChars = 1200

/** What the generator yields: a chunk, or a mark that a unit of work (a block, a piece) was done. */
const worked = Symbol("worked")

/** `text.split(separator)`, one piece at a time (`separator` global, never matching the empty string). */
function* splitBy(text: string, separator: RegExp): Generator<string> {
  separator.lastIndex = 0
  let from = 0
  for (let m = separator.exec(text); m !== null; m = separator.exec(text)) {
    yield text.slice(from, m.index)
    from = m.index + m[0].length
  }
  yield text.slice(from)
}

/** `block.match(sentence) ?? [block]`, one sentence at a time. */
function* sentences(block: string): Generator<string> {
  const sentence = /[^.!?\n]+(?:[.!?]+|\n|$)\s*/g
  let any = false
  for (let m = sentence.exec(block); m !== null; m = sentence.exec(block)) {
    any = true
    yield m[0]
  }
  if (!any) yield block
}

function* cut(block: string): Generator<string | typeof worked> {
  if (block.length <= maxChars) {
    yield block
    return
  }
  let current = ""
  for (const sentence of sentences(block)) {
    for (let i = 0; i < sentence.length; i += maxChars) {
      const piece = sentence.slice(i, i + maxChars)
      if (current.length + piece.length > maxChars && current !== "") {
        yield current.trim()
        current = ""
      }
      current += piece
      yield worked
    }
  }
  if (current.trim() !== "") yield current.trim()
}

/** The chunks of `text`, with a `worked` mark after each unit of work. */
function* chunks(text: string): Generator<string | typeof worked> {
  let heading = ""
  let current = ""
  for (const raw of splitBy(text, /\n\s*\n/g)) {
    yield worked
    const block = raw.trim()
    if (block === "") continue
    if (/^#{1,6}\s/.test(block)) {
      if (current.trim() !== "") yield current.trim()
      heading = block.replace(/^#+\s*/, "")
      current = `${heading}\n`
      continue
    }
    for (const piece of cut(block)) {
      if (piece === worked) {
        yield worked
        continue
      }
      if (current.length + piece.length + 2 > maxChars && current.trim() !== heading) {
        if (current.trim() !== "") yield current.trim()
        current = heading === "" ? "" : `${heading}\n`
      }
      current += `${piece}\n\n`
    }
  }
  if (current.trim() !== "") yield current.trim()
}

export const chunk = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const piece of chunks(text)) if (piece !== worked) out.push(piece)
  return out
}

/** Units of work (blocks, pieces of at most `maxChars`) done between two turns of the event loop. */
export const stepUnits = 256

/** A macrotask's turn: timers and I/O run before the fiber goes on (`Effect.yieldNow` is a microtask's, mostly). */
const turn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** `chunk(text)`, with a turn of the event loop every `stepUnits` units of work. */
export const chunkInSteps = (text: string): Effect.Effect<Array<string>> =>
  Effect.gen(function* () {
    const out: Array<string> = []
    const work = chunks(text)
    let units = 0
    for (let next = work.next(); next.done !== true; next = work.next()) {
      if (next.value !== worked) out.push(next.value)
      else if (++units % stepUnits === 0) yield* turn
    }
    return out
  })

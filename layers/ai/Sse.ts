/**
 * A server-sent events reader for the `openai` provider's streamed chat
 * completions (and the SDK's reply reader): text in arbitrary pieces in, each
 * complete event (its `data` and last `id`) out. Lines end in `\n`, `\r\n` or `\r`; an event ends at a blank line; its
 * `data:` lines join with `\n`; comments (`:`) and other fields are skipped.
 */
import * as Stream from "effect/Stream"

export interface SseMessage {
  /** The last `id:` seen so far (it carries over to later events, as in browsers). */
  readonly id: string | undefined
  readonly data: string
}

export interface SseParser {
  /** Every event completed by `text`. */
  readonly feed: (text: string) => Array<SseMessage>
  /** A last event the stream ended without a blank line after. */
  readonly end: () => Array<SseMessage>
}

export const makeParser = (): SseParser => {
  let buffer = ""
  let data: Array<string> | null = null
  let lastId: string | undefined
  // a `\r` ending one piece may be the first half of a `\r\n` split across pieces
  let skipLf = false

  const line = (text: string, out: Array<SseMessage>) => {
    if (text === "") {
      if (data !== null) out.push({ id: lastId, data: data.join("\n") })
      data = null
      return
    }
    if (text.startsWith(":")) return
    const colon = text.indexOf(":")
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? "" : text.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "data") (data ??= []).push(value)
    else if (field === "id" && !value.includes("\0")) lastId = value
  }

  const feed = (text: string) => {
    const out: Array<SseMessage> = []
    let input = text
    if (skipLf && input.startsWith("\n")) input = input.slice(1)
    skipLf = false
    buffer += input
    let start = 0
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer[i]
      if (c !== "\n" && c !== "\r") continue
      line(buffer.slice(start, i), out)
      if (c === "\r") {
        if (i + 1 < buffer.length) {
          if (buffer[i + 1] === "\n") i++
        } else {
          skipLf = true
        }
      }
      start = i + 1
    }
    buffer = buffer.slice(start)
    return out
  }

  const end = () => {
    const out: Array<SseMessage> = []
    if (buffer !== "") line(buffer, out)
    buffer = ""
    line("", out)
    return out
  }

  return { feed, end }
}

/** The data of each event of a text stream, in order. */
export const events = <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
  Stream.suspend(() => {
    const parser = makeParser()
    return text.pipe(
      Stream.mapConcat((piece) => parser.feed(piece).map((m) => m.data)),
      Stream.concat(Stream.suspend(() => Stream.fromIterable(parser.end().map((m) => m.data))))
    )
  })

/**
 * Splits a document into retrieval chunks: whole blocks (paragraphs, headings
 * with what follows) packed up to a size, a block longer than that cut at
 * sentence ends. Each chunk repeats its section heading so it reads alone.
 */
const maxChars = 1200

const sentences = (block: string): Array<string> => block.match(/[^.!?\n]+(?:[.!?]+|\n|$)\s*/g) ?? [block]

const cut = (block: string): Array<string> => {
  if (block.length <= maxChars) return [block]
  const out: Array<string> = []
  let current = ""
  for (const sentence of sentences(block)) {
    for (let i = 0; i < sentence.length; i += maxChars) {
      const piece = sentence.slice(i, i + maxChars)
      if (current.length + piece.length > maxChars && current !== "") {
        out.push(current.trim())
        current = ""
      }
      current += piece
    }
  }
  if (current.trim() !== "") out.push(current.trim())
  return out
}

export const chunk = (text: string): Array<string> => {
  const chunks: Array<string> = []
  let heading = ""
  let current = ""
  const flush = () => {
    if (current.trim() !== "") chunks.push(current.trim())
    current = ""
  }
  for (const raw of text.split(/\n\s*\n/)) {
    const block = raw.trim()
    if (block === "") continue
    if (/^#{1,6}\s/.test(block)) {
      flush()
      heading = block.replace(/^#+\s*/, "")
      current = `${heading}\n`
      continue
    }
    for (const piece of cut(block)) {
      if (current.length + piece.length + 2 > maxChars && current.trim() !== heading) {
        flush()
        current = heading === "" ? "" : `${heading}\n`
      }
      current += `${piece}\n\n`
    }
  }
  flush()
  return chunks
}

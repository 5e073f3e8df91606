/**
 * Each API group's reference, in Markdown: `docs/reference/<name>.md`, its tag's description in the OpenAPI
 * document and on `/docs`. A figure the code owns (a plan's cap, a rule's wording) is written `{{name}}` in
 * the file and given here, so the text cannot drift from it.
 */
import { referenceFile } from "./ReferenceFiles.js"

export const reference = (name: string, values: Readonly<Record<string, string | number | null>> = {}): string =>
  referenceFile(name)
    .replace(/\n$/, "")
    .replace(/\{\{([\w.]+)\}\}/g, (_, key: string) => {
      const value = values[key]
      if (value === undefined) throw new Error(`docs/reference/${name}.md: no value for {{${key}}}`)
      return String(value)
    })

/**
 * The reference's Markdown files (`docs/reference/<name>.md`), read from the sources' tree. The bundle never
 * runs this module: the build (`scripts/build.ts`) puts the files' text in its place.
 */
import { readFileSync } from "node:fs"

export const referenceFile = (name: string): string =>
  readFileSync(new URL(`../docs/reference/${name}.md`, import.meta.url), "utf8")

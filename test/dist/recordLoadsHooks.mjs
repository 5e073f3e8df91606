/** Module hooks of `recordLoads.mjs`: each loaded file's URL, one per line. */
import { appendFileSync } from "node:fs"

let file

export const initialize = (data) => {
  file = data.file
}

export const load = async (url, context, next) => {
  if (file !== undefined && url.startsWith("file:")) appendFileSync(file, `${url}\n`)
  return next(url, context)
}

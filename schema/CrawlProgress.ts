/**
 * A crawl's progress as its followers show it (the CLI's line, the console's bar), as plain code over the
 * crawl's public fields: the console, browser code, must not bundle Effect.
 */
interface Progress {
  readonly status: string
  readonly pages: { readonly indexed: number; readonly indexing: number; readonly failed: number; readonly queued: number }
}

/** The walk over and every page it kept indexed or failed. */
export const crawlSettled = (c: Progress) => c.status !== "queued" && c.status !== "running" && c.pages.indexing === 0

/** Pages done (indexed or failed) against those and the ones still to go (being indexed, or to be read), 0 to 1. */
export const crawlShare = (c: Progress) => {
  const done = c.pages.indexed + c.pages.failed
  const ahead = c.pages.indexing + c.pages.queued
  return crawlSettled(c) ? 1 : done + ahead === 0 ? 0 : done / (done + ahead)
}

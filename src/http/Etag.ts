/** `If-None-Match` holds this ETag (a list, `*`, weak forms included). */
export const matchesEtag = (header: string | undefined, etag: string): boolean =>
  header !== undefined &&
  header.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "")
    return tag === "*" || tag === etag
  })

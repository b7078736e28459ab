/** An entity tag of a list (RFC 9110 §8.8.3): weak or not, its opaque part quoted; commas may be inside. */
const ENTITY_TAG = /\s*(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/y

/**
 * Whether `If-None-Match` names `etag` (a strong tag, quoted): `*`, or the same opaque tag weak or strong (the weak
 * comparison §13.1.2 asks for). A list that is not well formed matches nothing: the client gets the whole file.
 */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  const tags = new Set<string>()
  ENTITY_TAG.lastIndex = 0
  while (ENTITY_TAG.lastIndex < header.length) {
    const match = ENTITY_TAG.exec(header)
    if (!match) return false
    tags.add(`"${match[1]}"`)
  }
  return tags.has(etag)
}

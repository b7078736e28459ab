/** The encodings the app's files are served in, the server's preference first. */
export const ENCODINGS = ['br', 'gzip', 'identity'] as const
export type ContentEncoding = (typeof ENCODINGS)[number]

/** A qvalue (RFC 9110 §12.4.2): 0 to 1, at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/
/** x-gzip is gzip (RFC 9110 §8.4.1.3). */
const ALIASES: Record<string, string> = { 'x-gzip': 'gzip' }

/**
 * What `Accept-Encoding` lets this file go out as: the compression the client weighs highest (a tie goes to br,
 * the smaller), or identity when it offers neither. A coding given q=0 is refused, and `*` stands for every coding
 * the header does not name; an element that is not well formed counts as not sent. Identity is what the client
 * gets even when it refuses it (RFC 9110 §12.5.3 lets a server send it rather than a 406).
 */
export function preferredEncoding(header: string): ContentEncoding {
  const weights = new Map<string, number>()
  for (const element of header.split(',')) {
    const [name = '', ...params] = element.split(';').map((part) => part.trim().toLowerCase())
    if (name === '') continue
    let q = 1
    for (const param of params) {
      const [key, value = ''] = param.split('=').map((part) => part.trim())
      if (key === 'q') q = QVALUE.test(value) ? Number(value) : NaN
    }
    const coding = ALIASES[name] ?? name
    if (!Number.isNaN(q) && !weights.has(coding)) weights.set(coding, q)
  }
  const weight = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0
  // A stable sort: of two codings weighed alike, br stays first.
  const offered = (['br', 'gzip'] as const).filter((coding) => weight(coding) > 0)
  return offered.sort((a, b) => weight(b) - weight(a))[0] ?? 'identity'
}

import { isIP } from 'node:net'

/**
 * The bucket a client's queued logins and challenges count against: its IPv4 address, or the
 * /64 of its IPv6 address (one subscriber's whole network, which such a client can roam at will).
 * What is no address (a command from a tool on the bus) shares the bucket `''`.
 */
export function clientSource(source: unknown): string {
  if (typeof source !== 'string') return ''
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(source)?.[1]
  const address = mapped ?? source
  const kind = isIP(address)
  return kind === 4 ? address : kind === 6 ? network64(address) : ''
}

/** `2001:db8:1:2::/64` of `2001:0db8:1:2:aa::1`; an embedded IPv4 tail counts as two groups. */
function network64(address: string): string {
  const groups = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]))
  const [head = '', tail] = address.split('::')
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`
}

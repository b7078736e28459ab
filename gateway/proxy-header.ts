import { isIPv4, isIPv6 } from 'node:net'

/** The 12 bytes every PROXY protocol v2 header starts with. */
export const PROXY_SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex')

/** A TCP connection's two ends as node reports them (`remoteAddress`... of a net.Socket). */
export interface Connection {
  remoteAddress?: string | undefined
  remotePort?: number | undefined
  localAddress?: string | undefined
  localPort?: number | undefined
}

/**
 * The PROXY protocol v2 header (PROXY command, TCP) that tells uWS who the client of a relayed
 * connection is, for `getProxiedRemoteAddressAsText()`. An IPv6 socket's address (an IPv4-mapped one
 * included) goes as 16 bytes, so uWS renders it as it renders such an address of its own sockets.
 * Undefined when the connection has no addresses any more (the client is gone).
 */
export function proxyHeader(connection: Connection): Buffer | undefined {
  const from = addressBytes(connection.remoteAddress)
  const to = addressBytes(connection.localAddress)
  // Both ends of one TCP connection are of one family.
  if (!from || !to || from.length !== to.length) return undefined
  const ports = Buffer.alloc(4)
  ports.writeUInt16BE(connection.remotePort ?? 0, 0)
  ports.writeUInt16BE(connection.localPort ?? 0, 2)
  const addresses = Buffer.concat([from, to, ports])
  const length = Buffer.alloc(2)
  length.writeUInt16BE(addresses.length)
  // 0x21: version 2, PROXY; 0x11 / 0x21: TCP over IPv4 / IPv6.
  return Buffer.concat([PROXY_SIGNATURE, Buffer.of(0x21, from.length === 4 ? 0x11 : 0x21), length, addresses])
}

function addressBytes(address: string | undefined): Buffer | undefined {
  if (address === undefined) return undefined
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number))
  const bare = address.split('%')[0]!
  return isIPv6(bare) ? ipv6Bytes(bare) : undefined
}

/** The 16 bytes of a valid IPv6 address in text (`::` shorthand and an IPv4 tail allowed). */
function ipv6Bytes(address: string): Buffer {
  const groups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)]
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number]
          return [(a << 8) | b, (c << 8) | d]
        })
  const [head = '', tail] = address.split('::')
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right]
  const bytes = Buffer.alloc(16)
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2))
  return bytes
}

import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'

/**
 * The origins of a page served by this very listener when reached by address rather than by name:
 * `scheme://ADDRESS:PORT` for each address it listens on (every interface's for a wildcard). No
 * DNS-rebinding page can have one: its origin names the attacker's host, never the device's address.
 */
export function listenerOrigins(host: string, port: number, tls: boolean): string[] {
  const scheme = tls ? 'https' : 'http'
  const addresses =
    host === '0.0.0.0' || host === '::' || host === ''
      ? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
      : isIP(host)
        ? [host]
        : []
  const defaultPort = port === (tls ? 443 : 80)
  return addresses.flatMap((address) => {
    const at = isIP(address) === 6 ? `[${address.toLowerCase()}]` : address
    return [`${scheme}://${at}:${port}`, ...(defaultPort ? [`${scheme}://${at}`] : [])]
  })
}

import { createServer, type AddressInfo } from 'node:net'
import type { Endpoint } from './types.js'

/** `endpoint`, with port 0 replaced by a port that is free now (taken again at once by the caller). */
export async function concretePort(endpoint: Endpoint): Promise<Endpoint> {
  if (endpoint.port !== 0) return endpoint
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: endpoint.host, port: 0, exclusive: true }, resolve)
  })
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return { host: endpoint.host, port }
}

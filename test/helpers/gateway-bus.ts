import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsConnection } from '@nats-io/transport-node'
import { callService, connectBus } from '../../bus/index.js'
import { type CommandReply, Subjects } from '../../protocol/index.js'
import type { Device } from '../../runtime/types.js'

/** The device's own bus as its gateway user: what the gateway may send, and nothing more. */
export async function gatewayBus(t: { teardown(fn: () => unknown): void }, device: Device): Promise<NatsConnection> {
  const config = await readFile(join(device.dataDir, 'run', 'nats', 'nats-server.conf'), 'utf8')
  const pass = /user: "gateway", password: "([^"]+)"/.exec(config)?.[1]
  if (!pass) throw new Error('no gateway bus user')
  const nc = await connectBus({ servers: device.natsUrl, service: 'gateway', credentials: { user: 'gateway', pass } })
  t.teardown(() => nc.close())
  return nc
}

/** One of the system service's operations, sent as the gateway sends it (no token: the DIAG ones take none). */
export function systemOp(nc: NatsConnection, device: Device, op: string): Promise<CommandReply> {
  return callService(nc, new Subjects(device.devid).command('system', op), { rid: `t-${op}`, tls: false }, 10_000, op)
}

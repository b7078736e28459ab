import type { NatsConnection } from '@nats-io/transport-node'
import { decode, encode } from '../protocol/index.js'
import { BusUnavailableError } from './errors.js'
import { Subjects } from '../protocol/index.js'
import type { CommandReply } from '../protocol/index.js'

export type SupervisorOrder = 'reboot' | 'shutdown' | 'upgrade'

/** Asks the supervisor (hemd's main process) to restart or stop the device's services, or to boot newly installed firmware. */
export async function orderSupervisor(
  nc: NatsConnection,
  devid: string,
  order: SupervisorOrder,
  rid: string,
): Promise<void> {
  let reply: CommandReply
  try {
    const msg = await nc.request(new Subjects(devid).command('supervisor', order), encode({ rid, tls: false }), {
      timeout: 5000,
    })
    reply = decode<CommandReply>(msg.data)
  } catch (err) {
    throw new BusUnavailableError(`the supervisor did not take the ${order} order`, { cause: err })
  }
  if (reply.status !== 200) throw new BusUnavailableError(`the supervisor refused the ${order} order (${reply.status})`)
}

import type { NatsConnection } from '@nats-io/transport-node'
import type { CheckinAction } from '../protocol/index.js'
import { decode, encode } from '../protocol/index.js'
import { BusUnavailableError } from './errors.js'
import { Subjects } from '../protocol/index.js'
import type { CommandReply } from '../protocol/index.js'

/** Passes a trusted backend's verified order (lock or shut down) to the health machine in the system service. */
export async function orderHealth(
  nc: NatsConnection,
  devid: string,
  action: CheckinAction,
  rid: string,
): Promise<void> {
  let reply: CommandReply
  try {
    const msg = await nc.request(
      new Subjects(devid).command('system', 'checkin'),
      encode({ rid, tls: false, body: { action } }),
      { timeout: 5000 },
    )
    reply = decode<CommandReply>(msg.data)
  } catch (err) {
    throw new BusUnavailableError(`the system service did not take the check-in's ${action} order`, { cause: err })
  }
  if (reply.status !== 200)
    throw new BusUnavailableError(`the system service refused the check-in's ${action} order (${reply.status})`)
}

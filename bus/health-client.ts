import type { NatsConnection } from '@nats-io/transport-node'
import { type CheckinAction, DEADLINE_MS, Subjects } from '../protocol/index.js'
import { BusUnavailableError } from './errors.js'
import { callService } from './call-service.js'

/** Passes a trusted backend's verified order (lock or shut down) to the health machine in the system service. */
export async function orderHealth(
  nc: NatsConnection,
  devid: string,
  action: CheckinAction,
  rid: string,
): Promise<void> {
  const reply = await callService(
    nc,
    new Subjects(devid).command('system', 'checkin'),
    { rid, tls: false, body: { action } },
    DEADLINE_MS.short,
    `the system service did not take the check-in's ${action} order`,
  )
  if (reply.status !== 200)
    throw new BusUnavailableError(`the system service refused the check-in's ${action} order (${reply.status})`)
}

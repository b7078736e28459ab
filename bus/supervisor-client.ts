import type { NatsConnection } from '@nats-io/transport-node'
import { DEADLINE_MS, Subjects } from '../protocol/index.js'
import { BusUnavailableError } from './errors.js'
import { callService } from './call-service.js'

export type SupervisorOrder = 'reboot' | 'shutdown' | 'upgrade'

/**
 * Asks the supervisor (hemd's main process) to restart or stop the device's services, or to boot newly installed
 * firmware.
 */
export async function orderSupervisor(
  nc: NatsConnection,
  devid: string,
  order: SupervisorOrder,
  rid: string,
): Promise<void> {
  // The supervisor answers at once and acts a moment later, so the order itself is short.
  const reply = await callService(
    nc,
    new Subjects(devid).command('supervisor', order),
    { rid, tls: false },
    DEADLINE_MS.short,
    `the supervisor did not take the ${order} order`,
  )
  if (reply.status !== 200) throw new BusUnavailableError(`the supervisor refused the ${order} order (${reply.status})`)
}

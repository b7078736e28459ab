import { type NatsConnection, TimeoutError } from '@nats-io/transport-node'
import { type CommandReply, type CommandRequest, decode, encode } from '../protocol/index.js'
import { BusTimeoutError, BusUnavailableError } from './errors.js'

/**
 * One command over a plain connection, for callers outside the gateway: the deadline (now +
 * `budgetMs`) travels in the envelope and bounds the wait. Rejects with BusTimeoutError when
 * the service did not answer in time, BusUnavailableError when it cannot be reached (no
 * responder, a closed or draining connection).
 */
export async function callService(
  nc: NatsConnection,
  subject: string,
  req: Omit<CommandRequest, 'deadline'>,
  budgetMs: number,
  what: string,
): Promise<CommandReply> {
  const deadline = Date.now() + budgetMs
  try {
    const msg = await nc.request(subject, encode({ ...req, deadline }), { timeout: budgetMs })
    return decode<CommandReply>(msg.data)
  } catch (err) {
    throw err instanceof TimeoutError
      ? new BusTimeoutError(what, { cause: err })
      : new BusUnavailableError(what, { cause: err })
  }
}

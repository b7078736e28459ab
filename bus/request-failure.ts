import { TimeoutError } from '@nats-io/transport-node'
import { BusTimeoutError, BusUnavailableError } from './errors.js'

/**
 * What a failed nats.js `request` means to the caller: its timeout is a service that did not
 * answer in time (BusTimeoutError); anything else (no responder, a closed or draining
 * connection) is a service out of reach (BusUnavailableError).
 */
export function requestFailure(err: unknown, message: string): BusTimeoutError | BusUnavailableError {
  return err instanceof TimeoutError
    ? new BusTimeoutError(message, { cause: err })
    : new BusUnavailableError(message, { cause: err })
}

import type { CommandReply, ErrorBody } from './bus-messages.js'

/** A refusal as every actor answers it: the HTTP status and the contract's `{error, message}` body. */
export function fail(status: number, error: string, message: string): CommandReply<ErrorBody> {
  return { status, body: { error, message } }
}

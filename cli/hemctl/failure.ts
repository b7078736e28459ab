// hemctl's exit statuses: scripts tell a refusal from an unreachable device from a bad passphrase.
import {
  BrokerRefusedError,
  BrokerUnreachableError,
  CryptoInputError,
  DeviceRefusedError,
  DeviceUnreachableError,
  ExtInputError,
  FingerprintMismatchError,
  ForbiddenError,
  UnauthorizedError,
  UnexpectedAnswerError,
  UnexpectedBrokerAnswerError,
} from '../../client/index.js'

export const EXIT = {
  OK: 0,
  /** The device refused the request (any other 4xx or 5xx), or answered something unexpected. */
  REFUSED: 1,
  USAGE: 2,
  /** The device could not be reached, or its certificate is not trusted. */
  UNREACHABLE: 3,
  /** Login refused (401) or the token's scope or role does not allow it (403). */
  DENIED: 4,
  /** The device presented another certificate than the one pinned for its URL. */
  FINGERPRINT: 5,
  /** Ctrl-C while waiting on the cloud (128 + SIGINT, as a shell has it); what waited was withdrawn. */
  INTERRUPTED: 130,
} as const

/** What hemctl finds wrong in what the device answered (a signature that does not verify): exit 1, as a refusal. */
export class CommandFailure extends Error {
  override name = 'CommandFailure'
}

export function hemctlFailure(err: unknown): { message: string; exit: number } | undefined {
  if (err instanceof FingerprintMismatchError) return { message: err.message, exit: EXIT.FINGERPRINT }
  if (err instanceof UnauthorizedError || err instanceof ForbiddenError)
    return { message: err.message, exit: EXIT.DENIED }
  if (err instanceof DeviceRefusedError || err instanceof UnexpectedAnswerError || err instanceof CommandFailure)
    return { message: err.message, exit: EXIT.REFUSED }
  // The cloud's broker: a refusal or a malformed answer is a refusal, as the device's are.
  if (err instanceof BrokerRefusedError || err instanceof UnexpectedBrokerAnswerError)
    return { message: err.message, exit: EXIT.REFUSED }
  // The client's checks of crypto-contract §3 (a message over 2048 bytes...): the user's input, as a usage error.
  if (err instanceof CryptoInputError || err instanceof ExtInputError) return { message: err.message, exit: EXIT.USAGE }
  if (err instanceof BrokerUnreachableError) {
    // fetch wraps the socket's error once more than node:https does.
    const cause = err.cause as { code?: unknown; cause?: { code?: unknown } } | undefined
    const hint = /CERT|SIGNATURE|SELF_SIGNED/.test(`${cause?.code} ${cause?.cause?.code}`)
      ? ' (give --cloud-ca FILE)'
      : ''
    return { message: `${err.message}${hint}`, exit: EXIT.UNREACHABLE }
  }
  if (err instanceof DeviceUnreachableError) {
    const code = String((err.cause as { code?: unknown })?.code)
    const hint = /CERT|SIGNATURE|SELF_SIGNED/.test(code)
      ? ' (give --ca FILE, or --insecure for a self-signed certificate)'
      : ''
    return { message: `${err.message}${hint}`, exit: EXIT.UNREACHABLE }
  }
  return undefined
}

// hemctl's exit statuses: scripts tell a refusal from an unreachable device from a bad passphrase.
import {
  CryptoInputError,
  DeviceRefusedError,
  DeviceUnreachableError,
  FingerprintMismatchError,
  ForbiddenError,
  UnauthorizedError,
  UnexpectedAnswerError,
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
  // The client's checks of crypto-contract §3 (a message over 2048 bytes...): the user's input, as a usage error.
  if (err instanceof CryptoInputError) return { message: err.message, exit: EXIT.USAGE }
  if (err instanceof DeviceUnreachableError) {
    const code = String((err.cause as { code?: unknown })?.code)
    const hint = /CERT|SIGNATURE|SELF_SIGNED/.test(code)
      ? ' (give --ca FILE, or --insecure for a self-signed certificate)'
      : ''
    return { message: `${err.message}${hint}`, exit: EXIT.UNREACHABLE }
  }
  return undefined
}

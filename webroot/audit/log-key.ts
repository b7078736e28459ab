// GET /api/logger/key's answer, checked for shape: the log public key and the journal's signed head,
// which the files are verified against (a record after the newest seal is covered only by it).
import { headClaim, SignedHeadError } from '../../audit/browser.js'
import type { HeadClaim } from '../../eventstore/browser.js'
import { fromBase64 } from '../../client/browser.js'

/** The device's answer is not a log key with a signed head. */
export class LogKeyError extends Error {
  override readonly name = 'LogKeyError'
}

const KEY = /^[A-Za-z0-9+/]{43}=$/

export interface LogKey {
  publicKey: Uint8Array
  head: HeadClaim
}

/** The log key and its signed head, checked as hem-audit checks them (audit/signed-head.ts). */
export function parseLogKey(answer: unknown): LogKey {
  const { key } = (answer ?? {}) as { key?: unknown }
  if (typeof key !== 'string' || !KEY.test(key)) throw new LogKeyError("the device's log key answer has no Ed25519 key")
  try {
    return { publicKey: fromBase64(key), head: headClaim(answer, "the device's signed head") }
  } catch (error) {
    if (!(error instanceof SignedHeadError)) throw error
    throw new LogKeyError(`the device's log key answer has no signed head of its journal: ${error.message}`, {
      cause: error,
    })
  }
}

// GET /api/logger/key's answer, checked for shape: the log public key and the journal's signed head,
// which the files are verified against (a record after the newest seal is covered only by it).
import { fromBase64 } from '../../client/base64.js'
import type { HeadClaim } from '../../eventstore/signed-heads.js'

/** The device's answer is not a log key with a signed head. */
export class LogKeyError extends Error {
  override readonly name = 'LogKeyError'
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
const FILE_ID = /^[0-9a-f]{8}$/

export interface LogKey {
  publicKey: Uint8Array
  head: HeadClaim
}

function bytesField(value: unknown, length: number, name: string): Uint8Array {
  const bytes = typeof value === 'string' && BASE64.test(value) ? fromBase64(value) : undefined
  if (bytes?.length !== length) throw new LogKeyError(`the device's log key answer has no ${length}-byte ${name}`)
  return bytes
}

export function parseLogKey(answer: unknown): LogKey {
  const { key, head } = (answer ?? {}) as { key?: unknown; head?: Record<string, unknown> }
  const publicKey = bytesField(key, 32, 'Ed25519 key')
  const { file, seq } = head ?? {}
  if (typeof file !== 'string' || !FILE_ID.test(file) || !Number.isSafeInteger(seq) || (seq as number) < 0)
    throw new LogKeyError("the device's log key answer has no signed head of its journal")
  return {
    publicKey,
    head: {
      file,
      seq: seq as number,
      head: bytesField(head?.head, 32, 'chain head'),
      sig: bytesField(head?.sig, 64, 'head signature'),
      source: "the device's signed head",
    },
  }
}

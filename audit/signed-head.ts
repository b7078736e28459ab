// A signed head as the device gives it (GET /api/logger/key's `head`), checked for shape and made
// a claim the verifier checks against the files and the log key.

import type { HeadClaim } from '../eventstore/index.js'
import { base64Field, type SignedHead } from '../protocol/index.js'

const FILE_ID = /^[0-9a-f]{8}$/

/** `value` is not a SignedHead: {file, seq, head, sig}. */
export class SignedHeadError extends Error {
  override readonly name = 'SignedHeadError'
}

/** A SignedHead, or the whole logger key answer holding one as `head`; throws SignedHeadError otherwise. */
export function parseSignedHead(value: unknown): SignedHead {
  const candidate = isObject(value) && 'key' in value && 'head' in value ? value.head : value
  if (!isObject(candidate)) throw new SignedHeadError('a signed head is a JSON object {file, seq, head, sig}')
  const { file, seq, head, sig } = candidate
  if (typeof file !== 'string' || !FILE_ID.test(file)) throw new SignedHeadError('`file` is not a log file id')
  if (!Number.isSafeInteger(seq) || (seq as number) < 0 || (seq as number) > 0xffffffff)
    throw new SignedHeadError('`seq` is not a record number')
  if (base64Field(head)?.length !== 32) throw new SignedHeadError('`head` is not a base64 32-byte chain head')
  if (base64Field(sig)?.length !== 64) throw new SignedHeadError('`sig` is not a base64 64-byte signature')
  return { file, seq: seq as number, head: head as string, sig: sig as string }
}

/** The claim the verifier checks, from a SignedHead or a logger key answer; `source` names it in the problems. */
export function headClaim(value: unknown, source = 'the signed head'): HeadClaim {
  const { file, seq, head, sig } = parseSignedHead(value)
  return { file, seq, head: base64Field(head)!, sig: base64Field(sig)!, source }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

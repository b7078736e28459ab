// A signed head as the device gives it (GET /api/logger/key's `head`), checked for shape and made
// a claim the verifier checks against the files and the log key. Without node: the management app
// reads the log key answer with it too (audit/browser.ts).

import { fromBase64Url, type HeadClaim } from '../eventstore/browser.js'
import type { SignedHead } from '../protocol/browser.js'

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
  if (base64Bytes(head)?.length !== 32) throw new SignedHeadError('`head` is not a base64 32-byte chain head')
  if (base64Bytes(sig)?.length !== 64) throw new SignedHeadError('`sig` is not a base64 64-byte signature')
  return { file, seq: seq as number, head: head as string, sig: sig as string }
}

/** The claim the verifier checks, from a SignedHead or a logger key answer; `source` names it in the problems. */
export function headClaim(value: unknown, source = 'the signed head'): HeadClaim {
  const { file, seq, head, sig } = parseSignedHead(value)
  return { file, seq, head: base64Bytes(head)!, sig: base64Bytes(sig)!, source }
}

/**
 * Strict base64 of either alphabet, padded or not, as protocol's base64Field reads it (which needs
 * Buffer): the padding only where it completes a quartet, no stray character, no set unused bit.
 */
function base64Bytes(value: unknown): Uint8Array | undefined {
  if (typeof value !== 'string') return undefined
  const body = value.replace(/={1,2}$/, '')
  if (body !== value && value.length % 4 !== 0) return undefined
  return fromBase64Url(body.replaceAll('+', '-').replaceAll('/', '_'))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

// The hash chain over the exact stored line bytes of one file.

import { createHash, hash } from 'node:crypto'

const DOMAIN = 'hemd.journal.v1'

export function chainStart(fileId: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(DOMAIN).update(fileId).digest())
}

/** Where each step's hash input is assembled: hashing is synchronous, so one buffer serves every step. */
let input = Buffer.allocUnsafe(4096)

/** The head after `line` (including its trailing newline). */
export function chainStep(head: Uint8Array, line: Uint8Array): Uint8Array {
  // A one-shot hash over a reused buffer: a Hash object, or a buffer per line, is most of a boot's chain cost.
  const length = head.length + line.length
  if (length > input.length) input = Buffer.allocUnsafe(2 * length)
  input.set(head, 0)
  input.set(line, head.length)
  const digest = hash('sha256', input.subarray(0, length), 'buffer')
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
}

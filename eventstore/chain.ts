// The hash chain over the exact stored line bytes of one file.

import { createHash, hash } from 'node:crypto'

const DOMAIN = 'hemd.journal.v1'

export function chainStart(fileId: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(DOMAIN).update(fileId).digest())
}

/** The head after `line` (including its trailing newline). */
export function chainStep(head: Uint8Array, line: Uint8Array): Uint8Array {
  // One buffer and a one-shot hash: a Hash object per line is most of a boot's chain cost.
  const input = Buffer.allocUnsafe(head.length + line.length)
  input.set(head, 0)
  input.set(line, head.length)
  const digest = hash('sha256', input, 'buffer')
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
}

// The hash chain over the exact stored line bytes of one file.

import { createHash } from 'node:crypto'

const DOMAIN = 'hemd.journal.v1'

export function chainStart(fileId: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(DOMAIN).update(fileId).digest())
}

/** The head after `line` (including its trailing newline). */
export function chainStep(head: Uint8Array, line: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(head).update(line).digest())
}

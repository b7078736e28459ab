// The journal's anchor as the sim keeps it: one small file of the enclave's directory, replaced
// whole. A real enclave keeps it in a monotonic counter that nothing outside it can move back.

import { HalCorruptError } from '../errors.js'
import type { JournalAnchor } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { readOptionalEnclaveFile } from './enclave-files.js'

const FILE_ID = /^[0-9a-f]{8}$/
const HEAD = /^[A-Za-z0-9+/]{43}=$/

export class JournalAnchorFile {
  constructor(private readonly path: string) {}

  read(): Promise<JournalAnchor | undefined> {
    return readOptionalEnclaveFile(this.path, parseAnchor)
  }

  write(anchor: JournalAnchor): Promise<void> {
    const { file, seq, head } = anchor
    const text = JSON.stringify({ file, seq, head: Buffer.from(head).toString('base64') })
    // Checked on the way in as on the way out: a bad anchor would read as a tamper at the next boot.
    parseAnchor(text)
    return writeFileAtomic(this.path, `${text}\n`, 0o600)
  }
}

function parseAnchor(text: string): JournalAnchor {
  const value = JSON.parse(text) as { file?: unknown; seq?: unknown; head?: unknown }
  const { file, seq, head } = value
  if (
    typeof file !== 'string' ||
    !FILE_ID.test(file) ||
    !Number.isSafeInteger(seq) ||
    (seq as number) < 0 ||
    (seq as number) > 0xffffffff ||
    typeof head !== 'string' ||
    !HEAD.test(head)
  )
    throw new HalCorruptError('the journal anchor is not {file, seq, head}')
  return { file, seq: seq as number, head: new Uint8Array(Buffer.from(head, 'base64')) }
}

// The thread prefetchChecks (checked-segments.ts) starts, possibly ahead of its files (warmUpChecks):
// checks the files it is then sent and answers each one's memo key and check.

import { parentPort } from 'node:worker_threads'
import { checkKey } from './checked-segments.js'
import { ed25519Verifier } from './ed25519-verifier.js'
import { nodeJournalCrypto } from './node-journal-crypto.js'
import { checkSegment } from './segment-check.js'
import type { JournalFile } from '../protocol/index.js'

parentPort!.once('message', ({ files, publicKey }: { files: JournalFile[]; publicKey: Uint8Array }) => {
  const verify = ed25519Verifier(publicKey)
  parentPort!.postMessage(
    files.map((file) => ({
      key: checkKey(file.id, file.bytes, publicKey),
      check: checkSegment(file.id, file.bytes, verify, nodeJournalCrypto),
    })),
  )
  parentPort!.close()
})

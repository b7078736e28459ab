// Exactly the check a client of the device family performs: 7 fields, the KEY_INIT signature of K,
// and every line's MAC. Nothing more: it shows that our files stay readable by those clients.

import { ed25519Verifier, fromBase64Url, lineMac } from '../eventstore/index.js'
import type { ClientCheckResult } from '../protocol/index.js'

export function verifyClientStyle(bytes: Uint8Array, publicKey: Uint8Array): ClientCheckResult {
  const verify = ed25519Verifier(publicKey)
  const problems: string[] = []
  const lines = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\n')
  if (lines.at(-1) === '') lines.pop()
  let key: Uint8Array | undefined
  let first = true
  lines.forEach((text, i) => {
    if (text.startsWith('#')) return
    const fields = text.split('|')
    if (fields.length !== 7) return void problems.push(`line ${i + 1}: expected 7 fields, found ${fields.length}`)
    if (first) {
      first = false
      const candidate = fromBase64Url(fields[4] ?? '')
      const signature = fromBase64Url(fields[5] ?? '')
      if (!candidate || !signature || !verify(candidate, signature))
        return void problems.push(`line ${i + 1}: KEY_INIT signature does not verify`)
      key = candidate
    }
    if (!key) return void problems.push(`line ${i + 1}: no file key to check the MAC`)
    if (lineMac(key, text.slice(0, text.lastIndexOf('|') + 1)) !== fields[6])
      problems.push(`line ${i + 1}: MAC does not match`)
  })
  return { ok: problems.length === 0, problems }
}

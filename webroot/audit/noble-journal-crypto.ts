// The journal's primitives in the browser, which has no node:crypto: @noble's SHA-256, HMAC and
// Ed25519, under the same checks the device runs (eventstore/segment-check.ts, check-journal.ts).
import { ed25519 } from '@noble/curves/ed25519.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { toBase64Url } from '../../client/browser.js'
import type { JournalCrypto } from '../../eventstore/browser.js'

const utf8 = new TextEncoder()

export const nobleJournalCrypto: JournalCrypto = {
  chainStart: (fileId) => sha256(utf8.encode(`hemd.journal.v1${fileId}`)),
  chainStep: (head, line) => sha256.create().update(head).update(line).digest(),
  lineMac: (key, signed) => toBase64Url(hmac(sha256, key, utf8.encode(signed)).subarray(0, 16)),
  ed25519Verifier(publicKey) {
    if (publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes')
    // RFC 8032's rules, as node:crypto applies them on the device, not ZIP 215's laxer ones.
    return (message, signature) => {
      try {
        return signature.length === 64 && ed25519.verify(signature, message, publicKey, { zip215: false })
      } catch {
        return false
      }
    }
  },
}

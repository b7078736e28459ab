// The hashes and signatures a journal check needs, given by its caller: node:crypto on the device
// and in the tools (node-journal-crypto.ts, the fast path), @noble in the management app, which
// has no node:crypto. The checks themselves (segment-check.ts, check-journal.ts) are the same code.

export type Ed25519Verifier = (message: Uint8Array, signature: Uint8Array) => boolean

export interface JournalCrypto {
  /** The chain head before a file's first line. */
  chainStart(fileId: string): Uint8Array
  /** The head after `line` (including its trailing newline). */
  chainStep(head: Uint8Array, line: Uint8Array): Uint8Array
  /** The MAC field of a record line, from the text it signs (up to and including the last `|`). */
  lineMac(key: Uint8Array, signed: string): string
  /** A verifier for one raw 32-byte Ed25519 public key. */
  ed25519Verifier(publicKey: Uint8Array): Ed25519Verifier
}

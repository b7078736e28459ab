// RFC 3394 key wrap over any AES block function: @noble/ciphers' aeskw fixes the IV to A6…A6,
// and the device lets the caller choose it.
import { timingSafeEqual } from 'node:crypto'
import { AuthenticationError } from './errors.js'

/** One AES block (16 bytes) in, one out, under the key encryption key. */
export type BlockFunction = (block: Uint8Array) => Uint8Array

/** RFC 3394 works on 64-bit semiblocks. */
export const SEMIBLOCK = 8
const ROUNDS = 6
export const DEFAULT_IV = new Uint8Array(SEMIBLOCK).fill(0xa6)

/** A ^= t, t as a 64-bit big-endian integer (RFC 3394 §2.2.1). */
function xorCounter(a: Uint8Array, t: number): void {
  const view = new DataView(a.buffer, a.byteOffset, SEMIBLOCK)
  view.setUint32(0, view.getUint32(0) ^ Math.floor(t / 2 ** 32))
  view.setUint32(4, (view.getUint32(4) ^ t) >>> 0)
}

/** §2.2.1: the integrity value A followed by the n wrapped semiblocks. */
export function wrap(encrypt: BlockFunction, data: Uint8Array, iv: Uint8Array = DEFAULT_IV): Uint8Array {
  const n = data.length / SEMIBLOCK
  const out = new Uint8Array(data.length + SEMIBLOCK)
  out.set(iv)
  out.set(data, SEMIBLOCK)
  const block = new Uint8Array(2 * SEMIBLOCK)
  for (let j = 0; j < ROUNDS; j++) {
    for (let i = 1; i <= n; i++) {
      block.set(out.subarray(0, SEMIBLOCK))
      block.set(out.subarray(i * SEMIBLOCK, (i + 1) * SEMIBLOCK), SEMIBLOCK)
      const b = encrypt(block)
      out.set(b.subarray(0, SEMIBLOCK))
      xorCounter(out, n * j + i)
      out.set(b.subarray(SEMIBLOCK), i * SEMIBLOCK)
      b.fill(0)
    }
  }
  block.fill(0)
  return out
}

/** §2.2.2; AuthenticationError when the recovered A is not `iv`, and the recovered key is wiped. */
export function unwrap(decrypt: BlockFunction, wrapped: Uint8Array, iv: Uint8Array = DEFAULT_IV): Uint8Array {
  const n = wrapped.length / SEMIBLOCK - 1
  const r = Uint8Array.from(wrapped)
  const block = new Uint8Array(2 * SEMIBLOCK)
  for (let j = ROUNDS - 1; j >= 0; j--) {
    for (let i = n; i >= 1; i--) {
      xorCounter(r, n * j + i)
      block.set(r.subarray(0, SEMIBLOCK))
      block.set(r.subarray(i * SEMIBLOCK, (i + 1) * SEMIBLOCK), SEMIBLOCK)
      const b = decrypt(block)
      r.set(b.subarray(0, SEMIBLOCK))
      r.set(b.subarray(SEMIBLOCK), i * SEMIBLOCK)
      b.fill(0)
    }
  }
  block.fill(0)
  const intact = timingSafeEqual(r.subarray(0, SEMIBLOCK), iv)
  const data = r.slice(SEMIBLOCK)
  r.fill(0)
  if (intact) return data
  data.fill(0)
  throw new AuthenticationError('key unwrap failed: integrity check')
}

// What the crypto engine property tests share: seeded fast-check runs, byte arbitraries, a seeded
// random source, and the "bytes or error name" outcome two engines must agree on.
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import type { Test } from 'tap'
import type { RandomSource } from '../../hal/crypto/index.js'

/** fast-check's fixed seed makes every run the same run. */
export const SEED = 0x5eed

export const hex = (data: Uint8Array) => Buffer.from(data).toString('hex')

export const bytes = (minLength: number, maxLength = minLength) => fc.uint8Array({ minLength, maxLength })

/** A deterministic byte stream (SHA-256 in counter mode), so key generation can redraw. */
export function seededRandom(seed: Uint8Array): RandomSource {
  let counter = 0
  return (n) => {
    const out = new Uint8Array(n)
    for (let at = 0; at < n; at += 32) {
      const block = createHash('sha256').update(seed).update(String(counter++)).digest()
      out.set(block.subarray(0, Math.min(32, n - at)), at)
    }
    return out
  }
}

/** The bytes, or the error's name: what two engines must agree on. */
export function outcome(run: () => Uint8Array): string {
  try {
    return hex(run())
  } catch (err) {
    return (err as Error).name
  }
}

export function check<Ts extends unknown[]>(t: Test, runs: number, property: fc.IProperty<Ts>) {
  const details = fc.check(property, { seed: SEED, numRuns: runs })
  t.notOk(details.failed, (details.failed && fc.defaultReportMessage(details)) || `${runs} cases agree`)
  t.equal(details.numRuns, runs, 'every case ran')
}

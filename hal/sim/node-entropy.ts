import { randomBytes } from 'node:crypto'
import { EntropyError } from '../errors.js'
import type { EntropySource } from '../types.js'

const MAX_READ = 65_536

export const nodeEntropy: EntropySource = {
  read(n: number): Uint8Array {
    if (!Number.isInteger(n) || n < 1 || n > MAX_READ) {
      throw new RangeError(`entropy read size must be an integer from 1 to ${MAX_READ}, got ${n}`)
    }
    try {
      return new Uint8Array(randomBytes(n))
    } catch (err) {
      throw new EntropyError(`the host random source failed to deliver ${n} bytes`, { cause: err })
    }
  },
}

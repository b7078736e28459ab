import { bytesToBigInt, type EcdhCurveInfo } from './curves.js'
import { CryptoInputError } from './errors.js'
import type { RandomSource } from './types.js'
import { drawOwnedBytes } from './validate.js'

// A sound source is rejected at most with probability 2^-32 per draw (P-256); 64 failures
// in a row mean the source is broken, not unlucky.
const MAX_DRAWS = 64

/**
 * A private key drawn from `random` the same way for both engines, so that equal random
 * bytes give equal key pairs. X25519/X448 take any bytes (clamping happens in the scalar
 * multiplication); the SEC curves reject and redraw scalars outside [1, n-1], without bias.
 */
export function drawPrivateKey(info: EcdhCurveInfo, random: RandomSource): Uint8Array {
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const key = drawOwnedBytes(random, info.size)
    if (info.kind === 'montgomery') return key
    key[0] = key[0]! & info.topByteMask
    const scalar = bytesToBigInt(key)
    if (scalar !== 0n && scalar < info.order) return key
    key.fill(0)
  }
  throw new CryptoInputError(`random source gave no valid scalar in ${MAX_DRAWS} draws`)
}

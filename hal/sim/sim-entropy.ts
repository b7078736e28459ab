import { readFileSync } from 'node:fs'
import type { EntropyFault, EntropySource } from '../types.js'
import { errorCode } from './error-code.js'

const STUCK_BYTE = 0x5a
/** `biased`: four bytes in every five are zero, the fifth comes from the real source. */
const BIAS_PERIOD = 5

/**
 * The host's source, unless `hemd sim entropy` broke it: the fault lives in a file under the
 * data dir so that every process of the device draws from the same broken source.
 */
export class SimEntropy implements EntropySource {
  private position = 0

  constructor(
    private readonly faultFile: string,
    private readonly source: EntropySource,
  ) {}

  read(n: number): Uint8Array {
    const bytes = this.source.read(n)
    const fault = this.fault()
    if (fault === 'stuck') bytes.fill(STUCK_BYTE)
    if (fault === 'biased') {
      for (let i = 0; i < bytes.length; i++) if ((this.position + i) % BIAS_PERIOD !== 0) bytes[i] = 0
    }
    this.position = (this.position + bytes.length) % BIAS_PERIOD
    return bytes
  }

  private fault(): EntropyFault {
    try {
      const text = readFileSync(this.faultFile, 'utf8').trim()
      return text === 'stuck' || text === 'biased' ? text : 'none'
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return 'none'
      throw err
    }
  }
}

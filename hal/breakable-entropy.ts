import type { EntropySource, RawEntropySource } from './types.js'

/** What a broken noise source repeats: any constant does, the repetition count test catches it within 41 bytes. */
const STUCK_BYTE = 0xa5

/**
 * The noise source as the health tests read it, with the DIAG build's forced failure (`break_trng`): held in
 * memory only, as a real device holds it in a register that a power cycle clears.
 */
export class BreakableEntropy implements RawEntropySource {
  private forced = false
  private last: number | undefined

  constructor(private readonly source: EntropySource) {}

  get forcedFailure(): boolean {
    return this.forced
  }

  get lastByte(): number | undefined {
    return this.last
  }

  forceFailure(): void {
    this.forced = true
  }

  /** A power-up: the forced failure is gone. */
  powerUp(): void {
    this.forced = false
  }

  read(n: number): Uint8Array {
    // Cleared first: a read that throws delivered nothing, so the last byte is no longer one the source just gave.
    this.last = undefined
    // A stuck source gives its constant: nothing is drawn from the noise source only to be overwritten.
    const bytes = this.forced ? new Uint8Array(n).fill(STUCK_BYTE) : this.source.read(n)
    this.last = bytes[bytes.length - 1]
    return bytes
  }
}

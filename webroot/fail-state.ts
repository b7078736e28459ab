// `fls_state` in words: one phrase per bit of the device contract's fail state.
import { FLS } from '../protocol/browser.js'

const BIT_WORDS: Record<number, string> = {
  [FLS.KAT]: 'a known-answer test of the crypto engine failed',
  [FLS.ENTROPY]: 'the random number source failed its health test',
  [FLS.TEMPERATURE]: 'the temperature is out of range',
  [FLS.INTEGRITY]: 'stored data failed its integrity check (journal or key store)',
  [FLS.ALLOCATION]: 'memory ran out',
  [FLS.STACK]: 'a stack overflow happened',
  [FLS.LOCKED]: 'locked by the fleet backend',
  [FLS.SHUTDOWN]: 'shut down by the fleet backend',
}

/** One phrase per set bit, lowest first; unknown bits by their value. */
export function failStateWords(fls: number): string[] {
  const words: string[] = []
  for (let bit = 1; bit <= 0x80; bit <<= 1) if (fls & bit) words.push(BIT_WORDS[bit] ?? `bit 0x${bit.toString(16)}`)
  if (fls > 0xff) words.push(`unknown bits 0x${(fls & ~0xff).toString(16)}`)
  return words
}

export function describeFailState(fls: number): string {
  return fls === 0 ? 'secure: no fault' : `failed: ${failStateWords(fls).join('; ')}`
}

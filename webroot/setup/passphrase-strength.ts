// A passphrase's strength as a rough guess of the guesses it takes: its length over the kinds of character it
// draws on, less what a guesser tries first (repeats, runs like "abc" or "321", one kind of character only). A
// guide for the owner, no promise: the device sees only a key derived from it (PBKDF2, 600 000 iterations), which
// makes each guess slow, not a weak passphrase strong.
import { h, uid } from '../dom.js'

export interface Strength {
  /** 0 very weak … 4 very strong. */
  level: 0 | 1 | 2 | 3 | 4
  bits: number
  words: string
}

const LEVELS: readonly [bits: number, words: string][] = [
  [0, 'very weak: guessed at once'],
  [28, 'weak: a computer guesses it in hours'],
  [45, 'fair: use a few more words'],
  [60, 'strong'],
  [80, 'very strong'],
]

function poolOf(text: string): number {
  let pool = 0
  if (/[a-z]/.test(text)) pool += 26
  if (/[A-Z]/.test(text)) pool += 26
  if (/[0-9]/.test(text)) pool += 10
  if (/[^a-zA-Z0-9]/.test(text)) pool += 33
  return pool
}

export function passphraseStrength(passphrase: string): Strength {
  const characters = [...passphrase]
  let bits = 0
  const perCharacter = Math.log2(Math.max(poolOf(passphrase), 1))
  for (const [i, char] of characters.entries()) {
    const before = characters[i - 1]
    const step = before === undefined ? NaN : char.codePointAt(0)! - before.codePointAt(0)!
    // A repeat or the next of a run adds next to nothing.
    bits += step === 0 || Math.abs(step) === 1 ? perCharacter / 4 : perCharacter
  }
  bits = Math.round(bits)
  const level = LEVELS.reduce<number>((found, [floor], i) => (bits >= floor ? i : found), 0) as Strength['level']
  return { level, bits, words: LEVELS[level]![1] }
}

/** A meter for `input`: a bar and its words, redrawn as it is typed; the input is described by it. */
export function strengthMeter(input: HTMLInputElement): HTMLElement {
  const words = h('span', { id: uid('strength') })
  const bar = h('meter', { min: 0, max: 4, low: 2, high: 3, optimum: 4, value: 0, 'aria-labelledby': words.id })
  const show = () => {
    const strength = passphraseStrength(input.value)
    bar.value = strength.level
    words.textContent = input.value
      ? `Strength: ${strength.words} (about ${strength.bits} bits).`
      : 'Strength: nothing typed yet.'
  }
  input.addEventListener('input', show)
  show()
  input.setAttribute('aria-describedby', `${input.getAttribute('aria-describedby') ?? ''} ${words.id}`.trim())
  return h('p', { class: 'strength' }, bar, ' ', words)
}

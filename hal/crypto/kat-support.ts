// What every known-answer test shares: its shape, hex helpers, and the run that never throws.
import { CURVES } from './curves.js'
import type { Curve } from './types.js'

export interface KatResult {
  ok: boolean
  /** Names of the failed tests; a test that throws unexpectedly fails too. */
  failed: string[]
}

/** A named check of `subject` (a CryptoEngine, or the PostQuantum implementation). */
export interface Kat<S> {
  name: string
  passes(subject: S): boolean
  /** It tests code both engines share (the native engine delegates it to noble). */
  shared?: boolean
  /** It tests code no boot path uses (signatures, HMAC, key wrap): it may wait for the first key command. */
  late?: boolean
}

export function bytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'))
}

export function hex(data: Uint8Array): string {
  return Buffer.from(data).toString('hex')
}

/** The public key as generateKeyPair returns it: raw for X25519/X448, else SEC1 compressed. */
export function compressed(curve: Curve, publicKey: string): string {
  if (CURVES[curve].kind === 'montgomery') return publicKey
  const x = publicKey.slice(2, 2 + (publicKey.length - 2) / 2)
  const yIsOdd = parseInt(publicKey.slice(-1), 16) % 2 === 1
  return (yIsOdd ? '03' : '02') + x
}

/** A copy with the lowest bit of byte `at` flipped: the smallest tampering. */
export function flipBit(data: Uint8Array, at = 0): Uint8Array {
  const copy = Uint8Array.from(data)
  copy[at] = copy[at]! ^ 0x01
  return copy
}

export function throws(run: () => unknown, type: new (...args: never[]) => Error): boolean {
  try {
    run()
    return false
  } catch (err) {
    return err instanceof type
  }
}

function passes<S>(kat: Kat<S>, subject: S): boolean {
  try {
    return kat.passes(subject)
  } catch {
    return false
  }
}

export function runKatList<S>(kats: readonly Kat<S>[], subject: S): KatResult {
  const failed = kats.filter((kat) => !passes(kat, subject)).map((kat) => kat.name)
  return { ok: failed.length === 0, failed }
}

/** The same, one KAT per `pause`: a long suite run beside a serving device never holds its event loop for long. */
export async function runKatListStepwise<S>(
  kats: readonly Kat<S>[],
  subject: S,
  pause: () => Promise<void>,
): Promise<KatResult> {
  const failed: string[] = []
  for (const kat of kats) {
    await pause()
    if (!passes(kat, subject)) failed.push(kat.name)
  }
  return { ok: failed.length === 0, failed }
}

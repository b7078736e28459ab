import { ed25519 } from '@noble/curves/ed25519.js'
import { createHash } from 'node:crypto'
import type { JournalMedia } from '../../hal/types.js'
import { readLines, type JournalOptions, type RecordLine } from '../../eventstore/index.js'

/** Fixtures shared by the journal tests (eventstore-*.test.ts, hem-audit.test.ts). */

export const SECRET = new Uint8Array(32).fill(7)
export const signer = { publicKey: ed25519.getPublicKey(SECRET), sign: (m: Uint8Array) => ed25519.sign(m, SECRET) }
export const START = 1_700_000_000_000
/** The banner `options` uses unless told otherwise. */
export const BANNER = '# hemd test {id}'

/** A clock that stands still at `now` until `advance` moves it. */
export function fixedClock(now = START) {
  return { now: () => now, monotonic: () => now, isSet: () => true, advance: (ms: number) => void (now += ms) }
}

/** Deterministic bytes: sha256 of `${seed}:${i}` for i = 0, 1, ... */
export function seededRandom(seed: string) {
  let i = 0
  return (n: number): Uint8Array => {
    const out = Buffer.alloc(n)
    for (let o = 0; o < n; o += 32) createHash('sha256').update(`${seed}:${i++}`).digest().copy(out, o)
    return new Uint8Array(out)
  }
}

/** Journal options over `media` with a fresh fixed clock and seeded random; `extra` overrides any of them. */
export function options(media: JournalMedia, extra: Partial<JournalOptions> = {}, banner = BANNER): JournalOptions {
  return { media, signer, clock: fixedClock(), random: seededRandom('k'), banner, ...extra }
}

/** Every file of `media`, in id order, as verifyJournal takes them. */
export async function readSet(media: JournalMedia) {
  return Promise.all((await media.list()).map(async (id) => ({ id, bytes: await media.read(id) })))
}

export function records(bytes: Uint8Array): RecordLine[] {
  return [...readLines(bytes)].flatMap((l) => (l.kind === 'record' ? [l.record] : []))
}

/** The chain computed independently of eventstore/, straight from FORMAT.md. */
export function chainOver(id: string, bytes: Uint8Array): Buffer {
  let head = createHash('sha256').update('hemd.journal.v1').update(id).digest()
  let start = 0
  for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
    head = createHash('sha256').update(head).update(bytes.subarray(start, nl + 1)).digest()
    start = nl + 1
  }
  return head
}

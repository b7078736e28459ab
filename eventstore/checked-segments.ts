// A memo of segment checks: at boot the eventstore's recovery checks the newest journal file,
// and the identity's history then checks every file, that one again. A check is a function of
// the log key, the file id and the file's bytes only, so a file whose bytes were checked already
// (by their SHA-256) need not be checked twice. A boot that reads the history next has every file
// checked on worker threads (prefetchChecks): recovery and the history find them done.
// A boot starts the first of them first of all (warmUpChecks): a Node thread takes 0.1–0.3 s to
// start, which then passes while the runtime's modules load rather than after the files are read.

import { createHash } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { ed25519Verifier } from './ed25519-verifier.js'
import { nodeJournalCrypto } from './node-journal-crypto.js'
import { checkSegment, type SegmentCheck } from './segment-check.js'
import type { JournalFile } from '../protocol/index.js'

/** Enough for the files of one boot (a file holds at most 8 MiB); a check is small, the files are not kept. */
const KEPT = 64
/** Below this, a worker's start costs more than the checks it takes over. */
const PREFETCH_MIN_BYTES = 1024 * 1024
const checked = new Map<string, Readonly<SegmentCheck>>()
let prefetching: Promise<void> | undefined
/** A check worker started ahead of its files, waiting for them. */
let warm: CheckWorker | undefined

interface CheckWorker {
  worker: Worker
  /** Its answer; rejected when it fails or ends first, whenever that happens. */
  answer: Promise<{ key: string; check: SegmentCheck }[]>
}

function startWorker(): CheckWorker {
  const worker = new Worker(new URL('./segment-check-worker.js', import.meta.url))
  // Neither a waiting nor a checking worker keeps a process alive.
  worker.unref()
  const answer = new Promise<{ key: string; check: SegmentCheck }[]>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the check worker exited with ${code}`)))
  })
  // A worker that fails, or is ended, before it is given files is no one's error.
  answer.catch(() => undefined)
  return { worker, answer }
}

/** Starts the worker the next prefetchChecks sends its files to; coolDownChecks ends it if none comes. */
export function warmUpChecks(): void {
  warm ??= startWorker()
}

/** Ends a worker warmUpChecks started that no prefetchChecks took (a boot that failed, or a short journal). */
export function coolDownChecks(): void {
  void warm?.worker.terminate()
  warm = undefined
}

/** What a check is remembered by. */
export function checkKey(id: string, bytes: Uint8Array, publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).update('\n').update(id).update('\n').update(bytes).digest('base64')
}

function remember(key: string, check: Readonly<SegmentCheck>): void {
  checked.set(key, check)
  if (checked.size > KEPT) checked.delete(checked.keys().next().value!)
}

/** checkSegment under the log key, remembered for the same key, id and bytes. Never mutate the result. */
export function checkSegmentOnce(id: string, bytes: Uint8Array, publicKey: Uint8Array): Readonly<SegmentCheck> {
  const key = checkKey(id, bytes, publicKey)
  const known = checked.get(key)
  if (known) return known
  const check = checkSegment(id, bytes, ed25519Verifier(publicKey), nodeJournalCrypto)
  remember(key, check)
  return check
}

/**
 * Checks `files` in a worker thread, into the memo; resolves once their checks are in (or the
 * worker failed). Best effort: should the worker fail, the files are checked when they are asked
 * for, as without it. Takes the files' bytes: those that own their buffer move to the worker (a
 * copy would cost a device the journal's size once more at its boot's peak) and are empty here
 * afterwards. The worker warmUpChecks started takes the first files; later ones get a new worker.
 */
export function prefetchChecks(files: JournalFile[], publicKey: Uint8Array): Promise<void> {
  if (files.reduce((sum, f) => sum + f.bytes.length, 0) < PREFETCH_MIN_BYTES) {
    coolDownChecks()
    return Promise.resolve()
  }
  const { worker, answer } = warm ?? startWorker()
  warm = undefined
  const previous = prefetching ?? Promise.resolve()
  const transferList = files.flatMap(({ bytes }) =>
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
      ? [bytes.buffer]
      : [],
  )
  worker.postMessage({ files, publicKey }, transferList)
  const landed = answer
    .then((results) => results.forEach(({ key, check }) => remember(key, check)))
    .catch(() => undefined)
  prefetching = previous.then(() => landed)
  return landed
}

/** Whether the check of these bytes is remembered (a prefetch's landed). */
export function isChecked(id: string, bytes: Uint8Array, publicKey: Uint8Array): boolean {
  return checked.has(checkKey(id, bytes, publicKey))
}

/** Resolves once the checks prefetchChecks started are in the memo (or failed). */
export function prefetchedChecks(): Promise<void> {
  return prefetching ?? Promise.resolve()
}

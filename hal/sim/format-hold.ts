// A format of the simulated disks that stops at a chosen point, as a card that stops answering in
// the middle of one: the knob for tests and drills of a power cut or a stop during a format. The
// knob is the file `<data>/sim/format-hold` naming the point (see FormatHoldPoint); a format that
// reaches it writes the point to `<data>/sim/format-held` and waits there until the knob names
// another point or none, or until it is cancelled.

import { setTimeout as delay } from 'node:timers/promises'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FormatHoldPoint } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { errorCode } from './error-code.js'

/** How often a held format looks at the knob again. */
const POLL_MS = 10

function files(dataDir: string): { knob: string; held: string } {
  const dir = join(dataDir, 'sim')
  return { knob: join(dir, 'format-hold'), held: join(dir, 'format-held') }
}

/** Holds every format of `dataDir` at `point` from now on, or no longer (undefined); forgets where one was held. */
export async function setSimFormatHold(dataDir: string, point: FormatHoldPoint | undefined): Promise<void> {
  const { knob, held } = files(dataDir)
  await rm(held, { force: true })
  if (point === undefined) return rm(knob, { force: true })
  await mkdir(join(dataDir, 'sim'), { recursive: true, mode: 0o700 })
  // Replaced whole: a held format reading half a point name would let go.
  await writeFileAtomic(knob, point, 0o600)
}

/** Where a format of `dataDir` waits now (or waited when its process died), if anywhere. */
export async function simFormatHeld(dataDir: string): Promise<FormatHoldPoint | undefined> {
  return (await readOptional(files(dataDir).held)) as FormatHoldPoint | undefined
}

/** Waits at `point` while the knob names it; at once when it does not, and no longer once `signal` aborts. */
export async function holdFormatAt(dataDir: string, point: FormatHoldPoint, signal?: AbortSignal): Promise<void> {
  const { knob, held } = files(dataDir)
  if ((await readOptional(knob)) !== point) return
  await writeFile(held, point, { mode: 0o600 })
  try {
    while (!signal?.aborted && (await readOptional(knob)) === point) await delay(POLL_MS)
  } finally {
    await rm(held, { force: true })
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined
    throw err
  }
}

// The fail states the device journaled (NON_SECURE_STATE raising a bit): files that verify can
// still say the device saw a tamper, a failed self-test or a lock, and verify tells them.

import { readLines } from '../../eventstore/index.js'
import { type JournalFile, LogResult, LogType, type VerifyResult } from '../../protocol/index.js'
import { iso } from './audit-input.js'
import { recordData } from './record-data.js'

export interface NonSecureState {
  file: string
  seq: number
  time: number
  /** Who raised it: `journal`, `keystore`, `sensor`, `checkin`, ... as the record says (at most 64 chars). */
  source: string | undefined
  /** The fls_state bit raised, and fls_state after it. */
  raised: number | undefined
  fls: number | undefined
}

/** Every NON_SECURE_STATE record that raised a bit, from the files that verify, in their order. */
export function nonSecureStates(files: JournalFile[], result: VerifyResult): NonSecureState[] {
  const bad = new Set(result.problems.map((p) => p.file))
  const found: NonSecureState[] = []
  for (const file of files) {
    if (bad.has(file.id)) continue
    for (const line of readLines(file.bytes)) {
      if (line.kind !== 'record') continue
      const { seq, time, type, result: outcome } = line.record
      // A bit cleared (the temperature back in range) is journaled as NON_SECURE_STATE with OK.
      if (type !== LogType.NON_SECURE_STATE || outcome === LogResult.OK) continue
      const data = recordData(line.record)
      found.push({
        file: file.id,
        seq,
        time,
        source: typeof data?.source === 'string' ? data.source.slice(0, 64) : undefined,
        raised: byte(data?.raised),
        fls: byte(data?.fls),
      })
    }
  }
  return found
}

const byte = (value: unknown): number | undefined =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 0xff ? (value as number) : undefined

const hex = (value: number | undefined): string =>
  value === undefined ? '?' : `0x${value.toString(16).padStart(2, '0')}`

/** `non-secure state: FILE:seq N at TIME: raised 0x08 (fls_state 0x08), source journal` */
export function nonSecureLine(state: NonSecureState, names: Map<string, string>): string {
  return (
    `non-secure state: ${names.get(state.file) ?? state.file}:seq ${state.seq.toString(16)} at ${iso(state.time)}: ` +
    `raised ${hex(state.raised)} (fls_state ${hex(state.fls)}), source ${state.source ?? '?'}`
  )
}

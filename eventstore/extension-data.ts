// Shape checks for the data of the LINK, SEAL and TRANSITION extension records.

import type { LinkData, SealData, SealReason, TransitionData } from '../protocol/browser.js'

const SEGMENT_ID = /^[0-9a-f]{8}$/
const REASONS: readonly SealReason[] = ['periodic', 'close', 'recovered', 'rotate']

function isBytes(value: unknown, length: number): value is Uint8Array {
  return value instanceof Uint8Array && value.length === length
}

export function parseLinkData(data: Record<string, unknown> | undefined): LinkData | undefined {
  if (!data) return undefined
  const { prev, head, seq } = data
  if (prev === null && head === null && seq === null) return { prev, head, seq }
  if (typeof prev !== 'string' || !SEGMENT_ID.test(prev)) return undefined
  if (head !== null && !isBytes(head, 32)) return undefined
  if (seq !== null && !(Number.isSafeInteger(seq) && (seq as number) >= 0)) return undefined
  return { prev, head: head === null ? null : new Uint8Array(head), seq: seq as number | null }
}

export function parseSealData(data: Record<string, unknown> | undefined): SealData | undefined {
  if (!data) return undefined
  const { head, sig, reason } = data
  if (!isBytes(head, 32) || !isBytes(sig, 64) || !REASONS.includes(reason as SealReason)) return undefined
  return { head: new Uint8Array(head), sig: new Uint8Array(sig), reason: reason as SealReason }
}

export function parseTransitionData(data: Record<string, unknown> | undefined): TransitionData | undefined {
  if (!data) return undefined
  const { machine, instance, version, from, to, event } = data
  const texts = [machine, from, to, event]
  if (!texts.every((text) => typeof text === 'string') || !Number.isSafeInteger(version)) return undefined
  if (instance !== undefined && typeof instance !== 'string') return undefined
  return {
    machine: machine as string,
    ...(instance !== undefined ? { instance } : {}),
    version: version as number,
    from: from as string,
    to: to as string,
    event: event as string,
  }
}

export function isTerminalSeal(reason: SealReason | undefined): boolean {
  return reason === 'close' || reason === 'rotate' || reason === 'recovered'
}

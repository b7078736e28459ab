import { UsageError } from './command-line.js'

/** From 1, within JetStream's stream-name length (HEM_JOURNAL_<devid>_<n>). */
const GENERATION = /^[1-9]\d{0,5}$/

/** `--stream-generation N` (default 1): which of a device's journal streams, for hemd and hem-audit alike. */
export function streamGeneration(value: string | undefined): number {
  if (value !== undefined && !GENERATION.test(value))
    throw new UsageError(`--stream-generation must be a whole number from 1 to 999999, not ${value.slice(0, 20)}`)
  return Number(value ?? 1)
}

import type { SlotState } from './key-slot.js'

/**
 * The slots by state, counted once for both views of them: `total` those in use (live, deleted or
 * invalid), `fragmented` the deleted ones below the highest slot in use.
 */
export function slotCounts(states: readonly SlotState[]) {
  const counts = { total: 0, deleted: 0, invalid: 0, free: 0, fragmented: 0 }
  for (const state of states) {
    if (state === 'free') {
      counts.free += 1
      continue
    }
    counts.total += 1
    if (state === 'invalid') counts.invalid += 1
    // The deleted slots below this one, in use: at the highest slot in use, the holes before it.
    counts.fragmented = counts.deleted
    if (state === 'deleted') counts.deleted += 1
  }
  return counts
}

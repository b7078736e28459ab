import type { Sealer } from '../../hal/index.js'
import { type Entry, readSlot, type SlotState } from './key-slot.js'

/** What the slots of the media hold, as a boot finds them. */
export interface ReadSlots {
  states: SlotState[]
  entries: Map<string, Entry>
  problems: string[]
  /** Slots holding an older version of a key that a newer slot replaced. */
  superseded: Set<number>
}

/**
 * Reads every slot; of two versions of a key the newer stays and the older is superseded, two slots
 * with the same version are invalid.
 */
export async function readSlots(
  slots: Uint8Array[],
  { sealer, devid }: { sealer: Pick<Sealer, 'unseal'>; devid: string },
): Promise<ReadSlots> {
  const read = await Promise.all(slots.map((slot, index) => readSlot(slot, index, sealer, devid)))
  const states: SlotState[] = read.map((slot) => slot.state)
  const entries = new Map<string, Entry>()
  const problems: string[] = []
  const superseded = new Set<number>()
  read.forEach((slot, index) => {
    if (slot.state === 'invalid') problems.push(`slot ${index}: ${slot.problem}`)
    if (slot.state !== 'live') return
    const { entry } = slot
    const other = entries.get(entry.record.kid)
    if (!other) {
      entries.set(entry.record.kid, entry)
    } else if (other.generation === entry.generation) {
      states[index] = 'invalid'
      problems.push(
        `slot ${index}: holds version ${entry.generation} of key ${entry.record.kid}, as slot ${other.index} does`,
      )
    } else {
      const [newer, older] = entry.generation > other.generation ? [entry, other] : [other, entry]
      entries.set(newer.record.kid, newer)
      states[older.index] = 'deleted'
      superseded.add(older.index)
    }
  })
  return { states, entries, problems, superseded }
}

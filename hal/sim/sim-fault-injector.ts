import { mkdir, open, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { EntropyFault, FaultInjector, FormatHoldPoint, JournalMedia, KeySlotMedia } from '../types.js'
import { setSimDiskFull } from './disk-space.js'
import { writeFileAtomic } from './atomic-file.js'
import { setSimFormatHold } from './format-hold.js'

/** Where the simulator's knobs live: plain files under `<data>/sim`, outside the device's own state. */
export function simFaultFiles(dataDir: string): { temperature: string; entropy: string } {
  const dir = join(dataDir, 'sim')
  return { temperature: join(dir, 'temperature'), entropy: join(dir, 'entropy') }
}

/** The faults `hemd sim` injects; each is a file every process of the device reads. */
export class SimFaultInjector implements FaultInjector {
  private readonly files: ReturnType<typeof simFaultFiles>

  constructor(
    private readonly dataDir: string,
    private readonly journal: { media: JournalMedia; dir: string },
    private readonly keySlots: KeySlotMedia,
  ) {
    this.files = simFaultFiles(dataDir)
  }

  async setTemperature(celsius: number | undefined): Promise<void> {
    if (celsius === undefined) return rm(this.files.temperature, { force: true })
    if (!Number.isFinite(celsius))
      throw new RangeError(`a temperature must be a finite number of degrees Celsius, got ${celsius}`)
    await knob(this.files.temperature, String(celsius))
  }

  async setEntropy(fault: EntropyFault): Promise<void> {
    if (fault === 'none') return rm(this.files.entropy, { force: true })
    await knob(this.files.entropy, fault)
  }

  setDiskFull(full: boolean): Promise<void> {
    return setSimDiskFull(this.dataDir, full)
  }

  holdFormat(point: FormatHoldPoint | undefined): Promise<void> {
    return setSimFormatHold(this.dataDir, point)
  }

  async corruptJournal(): Promise<{ file: string; line: number }> {
    const id = (await this.journal.media.list()).at(-1)
    if (id === undefined) throw new RangeError('the journal has no file to corrupt')
    const text = Buffer.from(await this.journal.media.read(id))
    // The middle record line: record 0 (the file key) and the line being written stay whole.
    const starts = lineStarts(text).filter((start) => text[start] !== 0x23)
    const line = Math.floor((starts.length - 1) / 2)
    const start = starts[line]
    if (start === undefined || starts.length < 3)
      throw new RangeError(`journal file ${id} has too few records to corrupt one`)
    // The time field's last hex digit: the line still parses, only its MAC and the chain break.
    const at = text.indexOf(0x7c, text.indexOf(0x7c, start) + 1) - 1
    const flipped = text[at] === 0x30 ? 0x31 : 0x30
    const file = await open(join(this.journal.dir, `${id}.log`), 'r+')
    try {
      await file.write(Uint8Array.of(flipped), 0, 1, at)
      await file.datasync()
    } finally {
      await file.close()
    }
    return { file: id, line: text.subarray(0, start).filter((b) => b === 0x0a).length }
  }

  async corruptKeySlot(): Promise<{ slot: number } | undefined> {
    const slots = await this.keySlots.readAll()
    const slot = slots.findIndex((bytes) => bytes.some((b) => b !== 0))
    if (slot < 0) return undefined
    const bytes = Uint8Array.from(slots[slot]!)
    const last = bytes.findLastIndex((b) => b !== 0)
    const at = Math.floor(last / 2)
    bytes[at] = bytes[at]! ^ 0x01
    await this.keySlots.write(slot, bytes)
    return { slot }
  }
}

// Replaced whole: the device reads a knob every second, and must never see it half written.
async function knob(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 })
  await writeFileAtomic(file, `${text}\n`, 0o600)
}

function lineStarts(text: Buffer): number[] {
  const starts: number[] = []
  for (let start = 0; start < text.length;) {
    const end = text.indexOf(0x0a, start)
    if (end < 0) break
    starts.push(start)
    start = end + 1
  }
  return starts
}

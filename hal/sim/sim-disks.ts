import { readFileSync } from 'node:fs'
import { mkdir, open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { HalCorruptError, HalError } from '../errors.js'
import type { DiskLayout, DiskStore } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { errorCode } from './error-code.js'

const SECTOR = 512
/** The start of each disk that a format really writes: its header and a zeroed metadata area. */
const FORMATTED_HEAD = 1024 * 1024
const STEPS = 4

/**
 * The two embedded disks as sparse image files under `<data>/disks`. `layout.json` is
 * written only when a format has finished, so a format cut short leaves the disks unformatted.
 * It is read on every question: with `--split` another process may have formatted meanwhile.
 */
export class SimDisks implements DiskStore {
  constructor(
    private readonly dir: string,
    private readonly capacitySectors: number,
    private readonly reservedSectors: number,
  ) {}

  layout(): DiskLayout | undefined {
    return readLayout(join(this.dir, 'layout.json'))
  }

  async format(disk0Sectors: number, onProgress: (percent: number) => void): Promise<void> {
    const disk1Sectors = this.capacitySectors - this.reservedSectors - disk0Sectors
    if (!Number.isSafeInteger(disk0Sectors) || disk0Sectors * SECTOR < FORMATTED_HEAD || disk1Sectors * SECTOR < FORMATTED_HEAD) {
      throw new HalError(`a Disk 0 of ${disk0Sectors} sectors does not fit the card`)
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    await rm(join(this.dir, 'layout.json'), { force: true })
    const layout = { disk0Sectors, disk1Sectors }
    let step = 0
    for (const [index, sectors] of [disk0Sectors, disk1Sectors].entries()) {
      const image = await open(join(this.dir, `disk${index}.img`), 'w', 0o600)
      try {
        await image.truncate(sectors * SECTOR)
        const head = Buffer.alloc(FORMATTED_HEAD)
        head.write(`HEMDISK\0${JSON.stringify({ disk: index, sectors })}`)
        for (let offset = 0; offset < FORMATTED_HEAD; offset += FORMATTED_HEAD / 2) {
          await image.write(head, offset, FORMATTED_HEAD / 2, offset)
          await image.sync()
          onProgress(Math.round((++step * 100) / STEPS))
        }
      } finally {
        await image.close()
      }
    }
    await writeFileAtomic(join(this.dir, 'layout.json'), JSON.stringify(layout), 0o600)
  }

  async erase(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true })
  }
}

function readLayout(path: string): DiskLayout | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined
    throw err
  }
  const layout = JSON.parse(text) as DiskLayout
  if (!Number.isSafeInteger(layout.disk0Sectors) || !Number.isSafeInteger(layout.disk1Sectors)) {
    throw new HalCorruptError(`${path} is corrupt; format the disks again`)
  }
  return layout
}

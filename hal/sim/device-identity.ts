import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { HalCorruptError } from '../errors.js'
import type { Clock, EntropySource, StorageGeometry, Variant } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { errorCode } from './error-code.js'

/** What `device.json` records about the simulated device, fixed at first open. */
export interface DeviceIdentity {
  variant: Variant
  devid: string
  createdAt: string
  storage: StorageGeometry
  genuineId: string | undefined
}

const SECTOR_CAPACITY = 15_523_840
const DISK0_SECTORS = 4_194_304
/** Sectors of the card the system keeps for itself, outside both disks. */
export const SYSTEM_RESERVED_SECTORS = 65_536

export function newDeviceIdentity(variant: Variant, entropy: EntropySource, clock: Clock): DeviceIdentity {
  const hex = (n: number) => Buffer.from(entropy.read(n)).toString('hex')
  const devid = hex(8)
  const storage: StorageGeometry =
    variant === 'P'
      ? {
          capacitySectors: SECTOR_CAPACITY,
          disk0Sectors: DISK0_SECTORS,
          disk1Sectors: SECTOR_CAPACITY - DISK0_SECTORS - SYSTEM_RESERVED_SECTORS,
          csd: hex(16),
          cid: hex(16),
        }
      : { capacitySectors: 0, disk0Sectors: 0, disk1Sectors: 0, csd: '', cid: '' }
  return {
    variant,
    devid,
    createdAt: new Date(clock.now()).toISOString(),
    storage,
    genuineId: variant === 'P' ? `SIM-${hex(8)}` : undefined,
  }
}

/** The identity stored in `dataDir`, or undefined for a data dir that holds no device yet. */
export async function readDeviceIdentity(dataDir: string): Promise<DeviceIdentity | undefined> {
  const path = join(dataDir, 'device.json')
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined
    throw err
  }
  try {
    return parseIdentity(JSON.parse(text))
  } catch (err) {
    throw new HalCorruptError(`${path} is corrupt (${(err as Error).message}); restore it or remove the data dir`, {
      cause: err,
    })
  }
}

export async function writeDeviceIdentity(dataDir: string, identity: DeviceIdentity): Promise<void> {
  await writeFileAtomic(join(dataDir, 'device.json'), `${JSON.stringify(identity, null, 2)}\n`, 0o600)
}

function parseIdentity(json: unknown): DeviceIdentity {
  const record = asRecord(json, 'device')
  const variant = record.variant
  if (variant !== 'P' && variant !== 'E') throw new Error(`variant is ${JSON.stringify(variant)}`)
  const storage = asRecord(record.storage, 'storage')
  const identity: DeviceIdentity = {
    variant,
    devid: matching(record.devid, /^[0-9a-f]{16}$/, 'devid'),
    createdAt: matching(record.createdAt, /^\d{4}-\d\d-\d\dT/, 'createdAt'),
    storage: {
      capacitySectors: sectors(storage.capacitySectors, 'capacitySectors'),
      disk0Sectors: sectors(storage.disk0Sectors, 'disk0Sectors'),
      disk1Sectors: sectors(storage.disk1Sectors, 'disk1Sectors'),
      csd: matching(storage.csd, /^([0-9a-f]{32})?$/, 'csd'),
      cid: matching(storage.cid, /^([0-9a-f]{32})?$/, 'cid'),
    },
    genuineId: record.genuineId === undefined ? undefined : matching(record.genuineId, /^\S+$/, 'genuineId'),
  }
  if (variant === 'P' && identity.genuineId === undefined) throw new Error('genuineId is missing')
  return identity
}

function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} is not an object`)
  return value as Record<string, unknown>
}

function matching(value: unknown, pattern: RegExp, what: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) throw new Error(`${what} is ${JSON.stringify(value)}`)
  return value
}

function sectors(value: unknown, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Error(`${what} is ${JSON.stringify(value)}`)
  return value as number
}

import { createHash, generateKeyPairSync, sign } from 'node:crypto'
import { mkdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { HalCorruptError, HalError } from '../errors.js'
import type { BootSlots, FirmwareSlots, SignedComponent, SlotName, TrialOutcome } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { rawPublicKey } from './ed25519-signer.js'

const SIM_BOOTLOADER_VERSION = '1.0.0-sim'

/** What the bootloader booted: a slot, and whether this is the one trial of a new install. */
export interface BootedSlot {
  slot: SlotName
  trial: boolean
}

interface PendingTrial {
  slot: SlotName
  version: string
  level: number
}

interface StoredComponent {
  version: string
  publicKey: string
  signature: string
}

/**
 * `<boot>/slots.json`, the simulated bootloader's state: the active slot, the anti-rollback
 * floor, a trial armed by an install (`trial`), the trial being booted now (`trying`: still
 * there at the next boot means the trial never confirmed), and the last trial's outcome.
 */
interface StoredSlots {
  active: SlotName
  floor: number
  trial?: PendingTrial
  trying?: PendingTrial
  outcome?: TrialOutcome
  firmware: StoredComponent
  bootloader: StoredComponent
}

/** Boot slots of a new device: slot A running `firmware`, under a simulated factory bootloader. */
export async function createBootSlots(dir: string, firmware: SignedComponent): Promise<BootSlots> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const bootloader = signedSimBootloader()
  await writeStored(dir, {
    active: 'A',
    floor: 0,
    firmware: encodeComponent(firmware),
    bootloader: encodeComponent(bootloader),
  })
  return { active: 'A', running: 'A', trial: false, firmware, bootloader }
}

/** The stored boot slots, now recording `firmware` as what the bootloader booted in `booted`. */
export async function loadBootSlots(dir: string, firmware: SignedComponent, booted?: BootedSlot): Promise<BootSlots> {
  const stored = await readStored(dir)
  const bootloader = decodeComponent(stored.bootloader, `${dir}/slots.json`)
  if (JSON.stringify(stored.firmware) !== JSON.stringify(encodeComponent(firmware)))
    await writeStored(dir, { ...stored, firmware: encodeComponent(firmware) })
  return {
    active: stored.active,
    running: booted?.slot ?? stored.active,
    trial: booted?.trial ?? false,
    firmware,
    bootloader,
  }
}

/** The directory slot `slot`'s build is installed in (the factory build when nothing is). */
export function slotDir(dir: string, slot: SlotName): string {
  return join(dir, 'slots', slot)
}

/**
 * The bootloader's choice, made durable before the slot runs: an armed trial is booted once
 * (moved to `trying`); a trial still `trying` at the next boot never confirmed and is rolled back.
 */
export async function chooseBoot(dir: string): Promise<BootedSlot & { rolledBack?: TrialOutcome }> {
  const stored = await readStored(dir)
  if (stored.trying) {
    const outcome: TrialOutcome = { result: 'rolled_back', slot: stored.trying.slot, version: stored.trying.version }
    const { trying: _dropped, ...rest } = stored
    await writeStored(dir, { ...rest, outcome })
    return { slot: stored.active, trial: false, rolledBack: outcome }
  }
  if (stored.trial) {
    const { trial, ...rest } = stored
    await writeStored(dir, { ...rest, trying: trial })
    return { slot: trial.slot, trial: true }
  }
  return { slot: stored.active, trial: false }
}

/** The trial confirmed its health: its slot becomes active and the floor rises to its level. */
export async function commitTrial(dir: string): Promise<TrialOutcome | undefined> {
  const stored = await readStored(dir)
  if (!stored.trying) return undefined
  const { trying, ...rest } = stored
  const outcome: TrialOutcome = { result: 'committed', slot: trying.slot, version: trying.version }
  await writeStored(dir, { ...rest, active: trying.slot, floor: Math.max(stored.floor, trying.level), outcome })
  return outcome
}

/** The trial failed: the active slot stays, and the next runtime learns of it. */
export async function abandonTrial(dir: string): Promise<TrialOutcome | undefined> {
  const stored = await readStored(dir)
  if (!stored.trying) return undefined
  const { trying, ...rest } = stored
  const outcome: TrialOutcome = { result: 'rolled_back', slot: trying.slot, version: trying.version }
  await writeStored(dir, { ...rest, outcome })
  return outcome
}

export class SimFirmwareSlots implements FirmwareSlots {
  constructor(
    private readonly dir: string,
    private readonly running: SlotName,
  ) {}

  async install(extract: (dir: string) => Promise<void>, version: string, level: number): Promise<SlotName> {
    // Until a trial is confirmed the other slot is the way back: it must not be overwritten.
    if ((await readStored(this.dir)).trying)
      throw new HalError('a trial boot is still being confirmed; install after it')
    const slot: SlotName = this.running === 'A' ? 'B' : 'A'
    const target = slotDir(this.dir, slot)
    const fresh = `${target}.new`
    await mkdir(join(this.dir, 'slots'), { recursive: true, mode: 0o700 })
    await rm(fresh, { recursive: true, force: true })
    await extract(fresh)
    // Disarm first: a crash between the swap and the arming leaves no trial of a half-made slot.
    const { trial: _old, ...stored } = await readStored(this.dir)
    await writeStored(this.dir, stored)
    await rm(target, { recursive: true, force: true })
    await rename(fresh, target)
    await writeStored(this.dir, { ...stored, trial: { slot, version, level } })
    return slot
  }

  async floor(): Promise<number> {
    const stored = await readStored(this.dir)
    return Math.max(stored.floor, stored.trying?.level ?? 0)
  }

  async takeOutcome(): Promise<TrialOutcome | undefined> {
    const { outcome, ...rest } = await readStored(this.dir)
    if (outcome) await writeStored(this.dir, rest)
    return outcome
  }
}

async function readStored(dir: string): Promise<StoredSlots> {
  const path = join(dir, 'slots.json')
  try {
    const stored = JSON.parse(await readFile(path, 'utf8')) as StoredSlots
    if (stored.active !== 'A' && stored.active !== 'B')
      throw new Error(`active slot is ${JSON.stringify(stored.active)}`)
    // Devices made before the floor existed start at 0.
    stored.floor ??= 0
    if (!Number.isInteger(stored.floor) || stored.floor < 0) throw new Error('the floor is not a non-negative integer')
    return stored
  } catch (err) {
    throw new HalCorruptError(`${path} is missing or corrupt: ${(err as Error).message}`, { cause: err })
  }
}

async function writeStored(dir: string, stored: StoredSlots): Promise<void> {
  await writeFileAtomic(join(dir, 'slots.json'), `${JSON.stringify(stored, null, 2)}\n`, 0o600)
}

function signedSimBootloader(): SignedComponent {
  const { privateKey } = generateKeyPairSync('ed25519')
  const digest = createHash('sha256').update('hem-bootloader').update(SIM_BOOTLOADER_VERSION).digest()
  return {
    version: SIM_BOOTLOADER_VERSION,
    publicKey: rawPublicKey(privateKey),
    signature: new Uint8Array(sign(null, digest, privateKey)),
  }
}

function encodeComponent(component: SignedComponent): StoredComponent {
  return {
    version: component.version,
    publicKey: Buffer.from(component.publicKey).toString('hex'),
    signature: Buffer.from(component.signature).toString('hex'),
  }
}

function decodeComponent(stored: StoredComponent, path: string): SignedComponent {
  const hex = (value: unknown, what: string) => {
    if (typeof value !== 'string' || !/^([0-9a-f]{2})+$/.test(value))
      throw new HalCorruptError(`${path}: ${what} is not hex`)
    return new Uint8Array(Buffer.from(value, 'hex'))
  }
  if (typeof stored?.version !== 'string') throw new HalCorruptError(`${path}: the bootloader version is missing`)
  return {
    version: stored.version,
    publicKey: hex(stored.publicKey, 'bootloader publicKey'),
    signature: hex(stored.signature, 'bootloader signature'),
  }
}

import { createHash, generateKeyPairSync, sign } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { HalCorruptError } from '../errors.js'
import type { BootSlots, SignedComponent } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { rawPublicKey } from './ed25519-signer.js'

const SIM_BOOTLOADER_VERSION = '1.0.0-sim'

/** Boot slots of a new device: slot A running `firmware`, under a simulated factory bootloader. */
export async function createBootSlots(dir: string, firmware: SignedComponent): Promise<BootSlots> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const slots: BootSlots = { active: 'A', firmware, bootloader: signedSimBootloader() }
  await writeBootSlots(dir, slots)
  return slots
}

/** The stored boot slots, now recording `firmware` as what the bootloader booted. */
export async function loadBootSlots(dir: string, firmware: SignedComponent): Promise<BootSlots> {
  const path = join(dir, 'slots.json')
  let stored: StoredSlots
  let slots: BootSlots
  try {
    stored = JSON.parse(await readFile(path, 'utf8')) as StoredSlots
    if (stored.active !== 'A' && stored.active !== 'B') throw new Error(`active slot is ${JSON.stringify(stored.active)}`)
    slots = { active: stored.active, firmware, bootloader: decodeComponent(stored.bootloader) }
  } catch (err) {
    throw new HalCorruptError(`${path} is missing or corrupt: ${(err as Error).message}`, { cause: err })
  }
  if (JSON.stringify(stored.firmware) !== JSON.stringify(encodeComponent(firmware))) await writeBootSlots(dir, slots)
  return slots
}

interface StoredComponent {
  version: string
  publicKey: string
  signature: string
}

interface StoredSlots {
  active: unknown
  firmware: StoredComponent
  bootloader: StoredComponent
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

async function writeBootSlots(dir: string, slots: BootSlots): Promise<void> {
  const stored: StoredSlots = {
    active: slots.active,
    firmware: encodeComponent(slots.firmware),
    bootloader: encodeComponent(slots.bootloader),
  }
  await writeFileAtomic(join(dir, 'slots.json'), `${JSON.stringify(stored, null, 2)}\n`, 0o600)
}

function encodeComponent(component: SignedComponent): StoredComponent {
  return {
    version: component.version,
    publicKey: Buffer.from(component.publicKey).toString('hex'),
    signature: Buffer.from(component.signature).toString('hex'),
  }
}

function decodeComponent(stored: StoredComponent): SignedComponent {
  const hex = (value: unknown, what: string) => {
    if (typeof value !== 'string' || !/^([0-9a-f]{2})+$/.test(value)) throw new Error(`${what} is not hex`)
    return new Uint8Array(Buffer.from(value, 'hex'))
  }
  if (typeof stored?.version !== 'string') throw new Error('bootloader version is missing')
  return {
    version: stored.version,
    publicKey: hex(stored.publicKey, 'bootloader publicKey'),
    signature: hex(stored.signature, 'bootloader signature'),
  }
}

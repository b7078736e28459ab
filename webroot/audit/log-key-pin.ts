// The log key, pinned per device at its first verification in this browser: the page verifies the
// journal with the key the device serves, so a device that serves another key later (another device
// under the same name, or a journal re-signed) must be said to have changed, not silently believed.
import { fromBase64, toBase64 } from '../../client/browser.js'
import { nobleJournalCrypto } from './noble-journal-crypto.js'

const STORE = 'hem.log-key-pins'
const DEVID = /^[0-9a-f]{16}$/

export interface Pin {
  /** The log key, base64, as hemd prints it at start ("log key"). */
  key: string
  /** Unix seconds of the browser's clock when it was pinned. */
  since: number
}

export type PinCheck =
  | { state: 'pinned'; devid: string; key: string }
  | { state: 'same'; devid: string; key: string; pin: Pin }
  | { state: 'changed'; devid: string; key: string; pin: Pin }
  /** The device's check-in statement did not name it under this key, or the browser keeps nothing. */
  | { state: 'unpinned'; key: string; why: string }

/**
 * Which device this is (the devid of its check-in statement, signed by the log key) and whether its key is the
 * one pinned for it: pins it at the first verification; a changed key stays unpinned until `repin`.
 */
export function checkPin(check: unknown, publicKey: Uint8Array, now: number): PinCheck {
  const key = toBase64(publicKey)
  const devid = signedDevid(check, publicKey)
  if (devid === undefined)
    return { state: 'unpinned', key, why: "the device's check-in statement does not name it under this key" }
  let pins: Record<string, Pin>
  try {
    pins = readPins()
  } catch {
    return { state: 'unpinned', key, why: 'this browser keeps no site data' }
  }
  const pin = pins[devid]
  if (pin?.key === key) return { state: 'same', devid, key, pin }
  if (pin) return { state: 'changed', devid, key, pin }
  if (!writePin(pins, devid, { key, since: now }))
    return { state: 'unpinned', key, why: 'this browser keeps no site data' }
  return { state: 'pinned', devid, key }
}

/** The owner's word that the device's new key is right (after a wipeout, say). */
export function repin(devid: string, key: string, now: number): boolean {
  try {
    return writePin(readPins(), devid, { key, since: now })
  } catch {
    return false
  }
}

function readPins(): Record<string, Pin> {
  const stored: unknown = JSON.parse(localStorage.getItem(STORE) ?? '{}')
  const pins: Record<string, Pin> = {}
  if (typeof stored !== 'object' || stored === null) return pins
  for (const [devid, pin] of Object.entries(stored)) {
    const { key, since } = (pin ?? {}) as Record<string, unknown>
    if (DEVID.test(devid) && typeof key === 'string' && typeof since === 'number') pins[devid] = { key, since }
  }
  return pins
}

function writePin(pins: Record<string, Pin>, devid: string, pin: Pin): boolean {
  try {
    localStorage.setItem(STORE, JSON.stringify({ ...pins, [devid]: pin }))
    return true
  } catch {
    return false
  }
}

/** `GET /api/system/checkin`'s `check`: base64url JSON `{devid, …}` "." its Ed25519 signature by the log key. */
function signedDevid(answer: unknown, publicKey: Uint8Array): string | undefined {
  const check = (answer as { check?: unknown } | undefined)?.check
  if (typeof check !== 'string') return undefined
  const [statement, signature, extra] = check.split('.')
  if (!statement || !signature || extra !== undefined) return undefined
  try {
    const verified = nobleJournalCrypto.ed25519Verifier(publicKey)(
      new TextEncoder().encode(statement),
      fromBase64(signature),
    )
    if (!verified) return undefined
    const { devid } = JSON.parse(new TextDecoder().decode(fromBase64(statement))) as { devid?: unknown }
    return typeof devid === 'string' && DEVID.test(devid) ? devid : undefined
  } catch {
    return undefined
  }
}

// Personalisation's exchange (POST /api/auth/init), free of node: hemctl's client and the management app's set-up
// wizard run this one code, each deriving the passphrases' keys its own way.
import { toBase64 } from './base64.js'
import type { DeviceJson } from './device-json.js'
import { buildInitEjwt } from './ejwt-builder.js'
import type { PassphraseKey } from './passphrase-key.js'
import type { InitChallenge, Personalised } from './types.js'

/** Both passphrases' keys for the device identity `eid` (the init challenge's, the PBKDF2 salt). */
export type InitKeys = (eid: string) => Promise<{ user: PassphraseKey; master: PassphraseKey }>

/**
 * Makes a fresh device its owner's: the master passphrase's key signs `cfg` (with `origin` the caller chose), which
 * carries both keys' public halves; `iat` is now in Unix seconds. Answers the init token (the user's,
 * `system:config`).
 */
export async function personalise(
  device: Pick<DeviceJson, 'json'>,
  keys: InitKeys,
  cfg: Record<string, unknown>,
  iat: number,
): Promise<Personalised> {
  const challenge = await device.json<InitChallenge>('GET', '/api/auth/init')
  const { user, master } = await keys(challenge.eid)
  const signed = { ...cfg, masterkey: toBase64(master.publicKey), userkey: toBase64(user.publicKey) }
  const init = buildInitEjwt(master, challenge, signed, iat)
  return device.json<Personalised>('POST', '/api/auth/init', { json: { init } })
}

// Who the fresh device says it is, from its public routes: the variant and versions (version), its devid (the
// check-in's payload, which needs no owner) and, on P, its attestation.
import { fromBase64, UnexpectedAnswerError } from '../../client/browser.js'
import { deviceRequest } from '../device-session.js'
import type { AttestationAnswer } from './attestation-check.js'

export interface DeviceFacts {
  /** From `hwv`: P has disks and an enclave with an attestation key, E neither. */
  variant: 'P' | 'E' | undefined
  hwv: string
  devid: string
  firmware: string
  bootloader: string
  /** The installed app image's SHA-256 (hex), when the device names it. */
  app?: string
  attestation?: AttestationAnswer
}

const variantOf = (hwv: string) => (hwv.includes('PPA') ? 'P' : hwv.includes('EPA') ? 'E' : undefined)

/** The devid of GET /api/system/checkin's `check`: base64url JSON, then its signature. */
function devidOf(check: unknown): string {
  let payload: { devid?: unknown }
  try {
    payload = JSON.parse(new TextDecoder().decode(fromBase64(String(check).split('.')[0] ?? ''))) as typeof payload
  } catch (cause) {
    throw new UnexpectedAnswerError("the device's check-in is not base64url JSON", { cause })
  }
  if (typeof payload.devid !== 'string' || !/^[0-9a-f]{16}$/.test(payload.devid))
    throw new UnexpectedAnswerError("the device's check-in names no devid")
  return payload.devid
}

export async function readDeviceFacts(): Promise<DeviceFacts> {
  const [version, checkin] = (await Promise.all([
    deviceRequest('/api/system/version'),
    deviceRequest('/api/system/checkin'),
  ])) as [Record<string, unknown>, { check?: unknown }]
  const hwv = String(version.hwv)
  const variant = variantOf(hwv)
  const attestation =
    variant === 'P' ? ((await deviceRequest('/api/system/config/attestation')) as AttestationAnswer) : undefined
  return {
    variant,
    hwv,
    devid: devidOf(checkin.check),
    firmware: String(version.fwv),
    bootloader: String(version.blv),
    ...(typeof version.uis === 'string' ? { app: version.uis } : {}),
    ...(attestation ? { attestation } : {}),
  }
}

// The calls about the device itself: identity, status, configuration, check-in, lifecycle.
import type { DeviceSession } from './device-session.js'
import type * as T from './types.js'
import { parseAnswer } from './wire.js'

export const status = (s: DeviceSession) => s.json<T.Status>('GET', '/api/system/status')

export const version = (s: DeviceSession) => s.json<T.Version>('GET', '/api/system/version')

export const openapi = (s: DeviceSession) => s.json<Record<string, unknown>>('GET', '/api/openapi.json')

export const config = (s: DeviceSession) => s.authorizedJson<T.Config>('system:config', 'GET', '/api/system/config')

export const setConfig = (s: DeviceSession, changes: Record<string, unknown>) =>
  s.authorizedJson<T.ConfigUpdated>('system:config', 'POST', '/api/system/config', { json: changes })

export const attestation = (s: DeviceSession) => s.json<T.Attestation>('GET', '/api/system/config/attestation')

export const ownedAttestation = (s: DeviceSession) =>
  s.authorizedJson<T.Attestation>('system:config', 'GET', '/api/system/config/attestation')

export async function provision(s: DeviceSession, body: Record<string, unknown>): Promise<void> {
  await s.call('POST', '/api/system/config/provisioning', { json: body })
}

export const checkin = (s: DeviceSession) => s.json<T.Checkin>('GET', '/api/system/checkin')

export const checkinReply = (s: DeviceSession, checked: string) =>
  s.json<T.CheckinResult>('POST', '/api/system/checkin', { json: { checked } })

export async function selftest(s: DeviceSession): Promise<T.Selftest> {
  return parseAnswer((await s.openWhileFresh('system:config', 'GET', '/api/system/selftest')).bytes) as T.Selftest
}

export async function reboot(s: DeviceSession): Promise<void> {
  await s.authorized('system:config', 'GET', '/api/system/reboot')
  s.forgetTokens()
}

/** `GET /metrics`: the Prometheus text exposition (docs/metrics.md), with a `system:metrics` token. */
export async function metrics(s: DeviceSession): Promise<string> {
  return new TextDecoder().decode((await s.authorized('system:metrics', 'GET', '/metrics')).bytes)
}

export async function shutdown(s: DeviceSession): Promise<void> {
  await s.authorized('system:config', 'GET', '/api/system/shutdown')
}

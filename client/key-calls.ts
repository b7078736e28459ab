// The key-management calls: create, import, derive, list, read, change, delete and search keys.
import * as body from './crypto-input.js'
import type { DeviceSession } from './device-session.js'
import type * as T from './types.js'
export { allKeys, listKeys } from './key-list-calls.js'
import { b64 } from './wire.js'

export const createKey = async (s: DeviceSession, input: T.KeySpec) =>
  s.authorizedJson<{ kid: string }>('keymgmt:gen', 'POST', '/api/keymgmt/create', { json: body.keySpecBody(input) })

export const importKey = async (s: DeviceSession, input: T.KeySpec & { pubkey: Uint8Array }) =>
  s.authorizedJson<{ kid: string }>('keymgmt:imp', 'POST', '/api/keymgmt/import', {
    json: { ...body.keySpecBody(input), pubkey: b64(input.pubkey) },
  })

export const deriveKey = async (s: DeviceSession, input: T.DeriveInput) =>
  s.authorizedJson<{ kid: string }>('keymgmt:derive', 'POST', '/api/keymgmt/derive', { json: body.deriveBody(input) })

export const getKey = (s: DeviceSession, kid: string, o: { use?: boolean }) =>
  s.authorizedJson<T.KeyDetails>(
    o.use ? `keymgmt:use:${kid}` : 'keymgmt:get',
    'GET',
    `/api/keymgmt/get/${kidPath(kid)}`,
  )

export async function deleteKey(s: DeviceSession, kid: string): Promise<void> {
  await s.authorized('keymgmt:del', 'DELETE', `/api/keymgmt/delete/${kidPath(kid)}`)
}

export async function updateKey(s: DeviceSession, kid: string, label: string, descr?: Uint8Array): Promise<void> {
  await s.authorized('keymgmt:upd', 'POST', '/api/keymgmt/update', {
    json: { kid, label, ...(descr ? { descr: b64(descr) } : {}) },
  })
}

export function searchKeys(s: DeviceSession, descr: string, offset?: number, limit?: number): Promise<T.KeyList> {
  const json = { descr, ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) }
  return s.authorizedJson('keymgmt:search', 'POST', '/api/keymgmt/search', { json })
}

function kidPath(kid: string): string {
  if (!/^[0-9a-f]{32}$/.test(kid)) throw new RangeError(`${JSON.stringify(kid)} is not a KID (32 hex digits)`)
  return kid
}

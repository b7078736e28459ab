// The key list, page by page or whole: free of node, so the management app lists keys as hemctl does.
import type { DeviceJson } from './device-json.js'
import type * as T from './types.js'

export const listKeys = (s: Pick<DeviceJson, 'authorizedJson'>, offset: number, count: number) =>
  s.authorizedJson<T.KeyList>('keymgmt:list', 'GET', `/api/keymgmt/list/${offset}/${count}`)

export async function allKeys(s: Pick<DeviceJson, 'authorizedJson'>): Promise<T.KeyEntry[]> {
  const keys: T.KeyEntry[] = []
  let page: T.KeyList
  do {
    page = await listKeys(s, keys.length, 15)
    keys.push(...page.list)
  } while (page.list.length > 0 && keys.length < page.total)
  return keys
}

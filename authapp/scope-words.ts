// A scope in words (ext-auth contract §4.2): what the owner lets the requester do with the token, if allowed.
import { printable } from '../client/browser.js'
import { keyTypeWords } from './key-type-words.js'

const PLAIN: Readonly<Record<string, string>> = {
  'system:config': "read and change the device's configuration",
  'system:upgrade': 'install firmware or app upgrades',
  'system:reboot': 'restart the device',
  'system:shutdown': 'shut the device down',
  'system:backup': 'set the backup passphrase and download backups (which it cannot decrypt)',
  'logger:get': 'read the audit log',
  'auth:ext:pair': 'pair another authenticator',
  'keymgmt:list': 'list the keys',
  'keymgmt:search': 'search the keys',
  'keymgmt:get': "read a key's details and public key",
  'keymgmt:gen': 'create keys',
  'keymgmt:imp': 'import keys',
  'keymgmt:derive': 'derive keys',
  'keymgmt:upd': "change keys' labels and descriptions",
  'keymgmt:del': 'delete keys',
}

const KEY_USE = /^keymgmt:use:([0-9a-f]{32})$/
const DISK = /^storage:disk(\d)(:rw)?$/

/**
 * `scope` (as asked, without its `#` hint) in words; `key` the hint's type word and label. A scope this page does
 * not know is named as it is: a token's scope is a prefix, so a short one grants every scope it begins.
 */
export function scopeWords(scope: string, key?: { type: string; label: string }, writable?: boolean): string {
  const plain = PLAIN[scope]
  if (plain !== undefined) return plain
  const use = KEY_USE.exec(scope)
  if (use) {
    if (!key) return `use the key ${use[1]}`
    const type = keyTypeWords(key.type)
    return `use the key “${printable(key.label)}”${type === undefined ? '' : ` (${type})`}`
  }
  const disk = DISK.exec(scope)
  if (disk)
    return `unlock disk ${disk[1]} ${(writable ?? disk[2] !== undefined) ? 'to read and write' : 'to read only'}`
  return `a permission this page does not know: “${printable(scope)}” (it grants every scope that begins so)`
}

// The backup routes (docs/backup.md) as a client calls them: the file as bytes, over HTTPS unless a test says not.
import { randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { type Answer, jsonOrUndefined } from './http.js'
import { api } from './keys.js'
import { clientContext } from './tls-client.js'
import { deriveBackupKey, sealBackup } from '../../actors/keystore/backup-seal.js'
import type { Variant } from '../../protocol/device.js'
import { randomKeyRecord } from './key-records.js'
import { defaultCfg, keys, MASTER_PASS, USER_PASS } from './owner.js'

export const BACKUP_PASS = 'a backup passphrase of mine'

/** One request whose bodies are bytes both ways. */
export function binaryCall(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Uint8Array } = {},
): Promise<Answer & { bytes: Buffer }> {
  const target = new URL(url)
  const https = target.protocol === 'https:'
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(
      target,
      {
        method: init.method ?? 'GET',
        headers: init.headers ?? {},
        rejectUnauthorized: false,
        ...(https ? { secureContext: clientContext() } : {}),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const bytes = Buffer.concat(chunks)
          const text = bytes.toString('utf8')
          resolve({ status: res.statusCode!, headers: res.headers, text, json: jsonOrUndefined(text), bytes })
        })
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}

export function setBackupPassphrase(
  base: string,
  token: string | undefined,
  passphrase = BACKUP_PASS,
): Promise<Answer> {
  return api(`${base}/api/system/backup/passphrase`, token, { passphrase })
}

export function downloadBackup(base: string, token: string | undefined) {
  return binaryCall(`${base}/api/system/backup`, token ? { headers: { authorization: `Bearer ${token}` } } : {})
}

export function uploadBackup(base: string, file: Uint8Array, headers: Record<string, string> = {}) {
  return binaryCall(`${base}/api/system/restore/upload`, {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment; filename="backup.hembackup"',
      'content-length': String(file.length),
      ...headers,
    },
    body: file,
  })
}

export function restoreWith(base: string, passphrase = BACKUP_PASS): Promise<Answer> {
  return api(`${base}/api/system/restore`, undefined, { passphrase })
}

/** scrypt of 2 MiB: a test file opens in moments (the device's own files use DEFAULT_SCRYPT). */
export const TEST_SCRYPT = { log2N: 14, r: 1, p: 1 } as const

/**
 * A backup file as a device of `variant` would make it, sealed here under BACKUP_PASS: the owner of defaultCfg (the
 * test passphrases, derived under a made-up source eid), one AES key. For tests that need a restore, not a source.
 */
export async function madeBackup(variant: Variant): Promise<Uint8Array> {
  const salt = Buffer.alloc(32, 7).toString('base64')
  const [user, master] = [await keys.get(USER_PASS, salt), await keys.get(MASTER_PASS, salt)]
  const { masterkey: _m, userkey: _u, ...cfg } = defaultCfg(variant, user, master)
  const kdfSalt = Uint8Array.from(randomBytes(16))
  const key = await deriveBackupKey(BACKUP_PASS, kdfSalt, TEST_SCRYPT)
  const header = {
    kdf: TEST_SCRYPT,
    salt: kdfSalt,
    nonce: Uint8Array.from(randomBytes(12)),
    devid: '00000000000000aa',
    logKey: Uint8Array.from(randomBytes(32)),
    head: { file: '00000001', seq: 9, chain: Uint8Array.from(randomBytes(32)) },
    created: Math.floor(Date.now() / 1000),
  }
  const login = { user: user.publicKey, master: master.publicKey, salt }
  return sealBackup(key, header, {
    cfg: { ...cfg, instanceid: 'f'.repeat(32) },
    login,
    keys: [randomKeyRecord('AES256')],
  })
}

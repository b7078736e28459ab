// The backup routes (docs/backup.md) as a client calls them: the file as bytes, over HTTPS unless a test says not.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { type Answer, jsonOrUndefined } from './http.js'
import { api } from './keys.js'
import { clientContext } from './tls-client.js'

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

// The seed's §6 table, walked row by row: each operation writes exactly the event, result and
// source (the HTTP status) the table gives, for every status in it.
import t from 'tap'
import { LogResult, LogType } from '../eventstore/index.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, createKey } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'

interface Row {
  operation: string
  event: keyof typeof LogType
  result: keyof typeof LogResult
  source: number
  /** Provokes the row; answers the HTTP status it got. */
  run(): Promise<number>
}

t.test('seed §6: every row writes its event, result and source', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const config = await login(o.base, 'system:config')
  const logger = await login(o.base, 'logger:get')
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'table', type: 'AES256' })
  const use = await login(o.base, `keymgmt:use:${kid}`)
  const cipher = (op: string, body: unknown) => api(`${o.https}/api/crypto/cipher/${op}`, use, body).then((a) => a.status)
  const sealed = (await api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('x')) })).json
  const fileId = (await api(`${o.base}/api/logger/list`, logger)).json.id[0] as string

  const rows: Row[] = [
    { operation: 'a token-protected operation, wrong scope', event: 'FAILED_SCOPE_CHECK', result: 'FAILED', source: 403, run: async () => (await api(`${o.base}/api/logger/list`, config)).status },
    { operation: 'Update configuration', event: 'CONFIG_UPDATED', result: 'OK', source: 200, run: async () => (await api(`${o.base}/api/system/config`, config, { email: 'table@example.com' })).status },
    { operation: 'Update configuration', event: 'CONFIG_UPDATED', result: 'FAILED', source: 406, run: async () => (await api(`${o.base}/api/system/config`, config, { wipeout: false })).status },
    { operation: 'Log list', event: 'LOGGER_LIST_LOG', result: 'OK', source: 200, run: async () => (await api(`${o.base}/api/logger/list`, logger)).status },
    { operation: 'Log list', event: 'LOGGER_LIST_LOG', result: 'FAILED', source: 404, run: async () => (await api(`${o.base}/api/logger/list/99999`, logger)).status },
    { operation: 'Log file', event: 'LOGGER_READ_LOG', result: 'OK', source: 200, run: async () => (await api(`${o.base}/api/logger/${fileId}`, logger)).status },
    { operation: 'Log file', event: 'LOGGER_READ_LOG', result: 'FAILED', source: 404, run: async () => (await api(`${o.base}/api/logger/00000000`, logger)).status },
    { operation: 'Encrypt', event: 'CRYPTO_ENCRYPT', result: 'ERROR', source: 400, run: () => cipher('encrypt', { alg: 'AES256-GCM', kid }) },
    { operation: 'Encrypt', event: 'CRYPTO_ENCRYPT', result: 'FAILED', source: 406, run: () => cipher('encrypt', { alg: 'AES256-GCM', kid, msg: 'AA==', pubkey: b64(Buffer.alloc(32, 9)) }) },
    { operation: 'Encrypt', event: 'CRYPTO_ENCRYPT', result: 'OK', source: 200, run: () => cipher('encrypt', { alg: 'AES256-GCM', kid, msg: 'AA==' }) },
    { operation: 'Decrypt', event: 'CRYPTO_DECRYPT', result: 'ERROR', source: 400, run: () => cipher('decrypt', { alg: 'AES256-GCM', kid, msg: sealed.ciphertext }) },
    { operation: 'Decrypt', event: 'CRYPTO_DECRYPT', result: 'FAILED', source: 406, run: () => cipher('decrypt', { alg: 'AES256-GCM', kid, msg: sealed.ciphertext, iv: sealed.iv, tag: b64(Buffer.alloc(16)) }) },
    { operation: 'Decrypt', event: 'CRYPTO_DECRYPT', result: 'OK', source: 200, run: () => cipher('decrypt', { alg: 'AES256-GCM', kid, msg: sealed.ciphertext, iv: sealed.iv, tag: sealed.tag }) },
  ]

  for (const row of rows) {
    const before = (await readJournal(o.device.dataDir)).records.length
    const status = await row.run()
    const added = (await readJournal(o.device.dataDir)).records.slice(before).filter((r) => r.type !== LogType.SEAL)
    const what = `${row.operation} → ${row.source}`
    t.equal(status, row.source, `${what}: the answer`)
    t.same(
      added.map((r) => ({ type: r.type, result: r.result, source: r.decoded?.source })),
      [{ type: LogType[row.event], result: LogResult[row.result], source: row.source }],
      `${what}: exactly ${row.event} ${row.result} ${row.source}`,
    )
  }

  // The table's install rows (UPGRADE OK 200, ERROR 406, ERROR 409) come with the upgrade issue;
  // until then their routes do not exist, and this fails the day they do, so the rows get walked.
  for (const path of ['/api/system/upgrade/install_fw', '/api/system/upgrade/install_ui']) {
    t.equal((await api(`${o.base}${path}`, config)).status, 404, `${path}: not served yet (upgrade issue)`)
  }
})

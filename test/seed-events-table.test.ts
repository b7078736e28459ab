// The seed's §6 table, walked row by row: each operation writes exactly the event, result and
// source (the HTTP status) the table gives, for every status in it.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { LogResult, LogType } from '../protocol/journal.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, createKey } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { imageOf, upload } from './helpers/upload.js'

interface Row {
  operation: string
  event: keyof typeof LogType
  result: keyof typeof LogResult
  source: number
  /** What must be true before the row's operation (not measured). */
  prepare?(): Promise<void>
  /** Provokes the row; answers the HTTP status it got. */
  run(): Promise<number>
}

t.test('seed §6: every row writes its event, result and source', async (t) => {
  const root = t.testdir({
    data: {},
    app: { 'index.html': 'app', 'big.bin': randomBytes(6 * 1024 * 1024).toString('base64') },
  })
  const o = await owned(t, { variant: 'P', dataDir: join(root, 'data') })
  const app = await imageOf(join(root, 'app'), 'ui', 'table-1', ['P'])
  const verified = async () => {
    t.equal((await upload(o.base, 'ui', app, {}, config)).status, 200)
    await until('verified', async () => (await api(`${o.base}/api/system/upgrade/check_ui`, config)).status === 200)
  }
  const install = (kind: string) => api(`${o.base}/api/system/upgrade/install_${kind}`, config).then((a) => a.status)
  const config = await login(o.base, 'system:config')
  const logger = await login(o.base, 'logger:get')
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'table', type: 'AES256' })
  const use = await login(o.base, `keymgmt:use:${kid}`)
  const cipher = (op: string, body: unknown) =>
    api(`${o.https}/api/crypto/cipher/${op}`, use, body).then((a) => a.status)
  const sealed = (
    await api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('x')) })
  ).json
  const fileId = (await api(`${o.base}/api/logger/list`, logger)).json.id[0] as string

  const rows: Row[] = [
    {
      operation: 'a token-protected operation, wrong scope',
      event: 'FAILED_SCOPE_CHECK',
      result: 'FAILED',
      source: 403,
      run: async () => (await api(`${o.base}/api/logger/list`, config)).status,
    },
    {
      operation: 'Update configuration',
      event: 'CONFIG_UPDATED',
      result: 'OK',
      source: 200,
      run: async () => (await api(`${o.base}/api/system/config`, config, { email: 'table@example.com' })).status,
    },
    {
      operation: 'Update configuration',
      event: 'CONFIG_UPDATED',
      result: 'FAILED',
      source: 406,
      run: async () => (await api(`${o.base}/api/system/config`, config, { wipeout: false })).status,
    },
    {
      operation: 'Log list',
      event: 'LOGGER_LIST_LOG',
      result: 'OK',
      source: 200,
      run: async () => (await api(`${o.base}/api/logger/list`, logger)).status,
    },
    {
      operation: 'Log list',
      event: 'LOGGER_LIST_LOG',
      result: 'FAILED',
      source: 404,
      run: async () => (await api(`${o.base}/api/logger/list/99999`, logger)).status,
    },
    {
      operation: 'Log file',
      event: 'LOGGER_READ_LOG',
      result: 'OK',
      source: 200,
      run: async () => (await api(`${o.base}/api/logger/${fileId}`, logger)).status,
    },
    {
      operation: 'Log file',
      event: 'LOGGER_READ_LOG',
      result: 'FAILED',
      source: 404,
      run: async () => (await api(`${o.base}/api/logger/00000000`, logger)).status,
    },
    {
      operation: 'Encrypt',
      event: 'CRYPTO_ENCRYPT',
      result: 'ERROR',
      source: 400,
      run: () => cipher('encrypt', { alg: 'AES256-GCM', kid }),
    },
    {
      operation: 'Encrypt',
      event: 'CRYPTO_ENCRYPT',
      result: 'FAILED',
      source: 406,
      run: () => cipher('encrypt', { alg: 'AES256-GCM', kid, msg: 'AA==', pubkey: b64(Buffer.alloc(32, 9)) }),
    },
    {
      operation: 'Encrypt',
      event: 'CRYPTO_ENCRYPT',
      result: 'OK',
      source: 200,
      run: () => cipher('encrypt', { alg: 'AES256-GCM', kid, msg: 'AA==' }),
    },
    {
      operation: 'Decrypt',
      event: 'CRYPTO_DECRYPT',
      result: 'ERROR',
      source: 400,
      run: () => cipher('decrypt', { alg: 'AES256-GCM', kid, msg: sealed.ciphertext }),
    },
    {
      operation: 'Decrypt',
      event: 'CRYPTO_DECRYPT',
      result: 'FAILED',
      source: 406,
      run: () =>
        cipher('decrypt', {
          alg: 'AES256-GCM',
          kid,
          msg: sealed.ciphertext,
          iv: sealed.iv,
          tag: b64(Buffer.alloc(16)),
        }),
    },
    {
      operation: 'Decrypt',
      event: 'CRYPTO_DECRYPT',
      result: 'OK',
      source: 200,
      run: () => cipher('decrypt', { alg: 'AES256-GCM', kid, msg: sealed.ciphertext, iv: sealed.iv, tag: sealed.tag }),
    },
    { operation: 'Install firmware', event: 'UPGRADE', result: 'ERROR', source: 406, run: () => install('fw') },
    {
      operation: 'Install management application',
      event: 'UPGRADE',
      result: 'ERROR',
      source: 406,
      run: () => install('ui'),
    },
    // A firmware install's OK 200 reboots into the new slot: test/upgrade-firmware.test.ts walks it.
    {
      operation: 'Install management application',
      event: 'UPGRADE',
      result: 'OK',
      source: 200,
      prepare: verified,
      run: () => install('ui'),
    },
  ]

  // Machine transitions go with some rows; the table is about the audit events.
  const audit = (r: { type: number }) => r.type !== LogType.SEAL && r.type !== LogType.TRANSITION
  for (const row of rows) {
    await row.prepare?.()
    const before = (await readJournal(o.device.dataDir)).records.length
    const status = await row.run()
    const added = (await readJournal(o.device.dataDir)).records.slice(before).filter(audit)
    const what = `${row.operation} → ${row.source}`
    t.equal(status, row.source, `${what}: the answer`)
    t.same(
      added.map((r) => ({ type: r.type, result: r.result, source: r.decoded?.source })),
      [{ type: LogType[row.event], result: LogResult[row.result], source: row.source }],
      `${what}: exactly ${row.event} ${row.result} ${row.source}`,
    )
  }

  // ERROR 409: a second install while the first unpacks its 6 MiB (both sent at once).
  await verified()
  const before = (await readJournal(o.device.dataDir)).records.length
  const statuses = (await Promise.all([install('ui'), install('ui')])).sort()
  t.same(statuses, [200, 409], 'Install management application → 409 while one runs')
  const added = (await readJournal(o.device.dataDir)).records.slice(before).filter(audit)
  t.same(
    added
      .map((r) => ({ type: r.type, result: r.result, source: r.decoded?.source }))
      .sort((a, b) => Number(a.source) - Number(b.source)),
    [
      { type: LogType.UPGRADE, result: LogResult.OK, source: 200 },
      { type: LogType.UPGRADE, result: LogResult.ERROR, source: 409 },
    ],
    'Install → 409: exactly UPGRADE ERROR 409 (beside the install that ran)',
  )
})

// Issue 40's "Done when": device A's key store (keys of every family, an imported public key) and configuration are
// backed up, restored onto a fresh device B, and every key works identically there: A's ciphertext decrypts on B, B's
// signatures verify with A's public keys, MACs and ML-KEM secrets agree. B's journal names A, the file and A's head,
// and verifies and replays to what B shows; A's journal has the BACKUP of the same file. B stays itself.

import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import t from 'tap'
import { replayDevice } from '../audit/index.js'
import { LogResult, LogType, readBackupHeader } from '../protocol/index.js'
import { BACKUP_PASS, downloadBackup, restoreWith, setBackupPassphrase, uploadBackup } from './helpers/backup.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { api, b64, bytesOf, Tokens } from './helpers/keys.js'
import { login, MASTER_PASS, owned } from './helpers/owner.js'

const msg = Buffer.from('attack at dawn, on both devices')

t.test('a backup of A restored onto a fresh B: same keys, same KIDs, same configuration', async (t) => {
  const dir = t.testdir()
  const a = await owned(t, { dataDir: join(dir, 'a') })
  const tokensA = new Tokens(a.base)
  const gen = await tokensA.get('keymgmt:gen')
  const create = async (type: string, extra: Record<string, unknown> = {}) => {
    const answer = await api(`${a.https}/api/keymgmt/create`, gen, { label: `${type} of A`, type, ...extra })
    if (answer.status !== 200) throw new Error(`${type}: ${answer.status} ${answer.text}`)
    return answer.json.kid as string
  }
  const kids = {
    aes: await create('AES256'),
    hmac: await create('SHA2-256'),
    ecdsa: await create('SECP256R1', { mode: 'ExDSA', descr: b64(Buffer.from('signs')) }),
    ed: await create('ED25519'),
    x: await create('CURVE25519'),
    kem: await create('MLKEM768'),
    dsa: await create('MLDSA65'),
  }
  const hostEd = ed25519.utils.randomSecretKey()
  const imported = await api(`${a.https}/api/keymgmt/import`, await tokensA.get('keymgmt:imp'), {
    label: 'a partner',
    type: 'ED25519',
    pubkey: b64(ed25519.getPublicKey(hostEd)),
  })
  t.equal(imported.status, 200, 'a public key imported')
  const changed = await api(`${a.base}/api/system/config`, a.token, { email: 'ada@restored.example' })
  t.equal(changed.status, 200, 'a configuration change on A')

  // What A does with its keys, to be done again on B.
  const use = (tokens: Tokens, https: string, kid: string, path: string, body: Record<string, unknown>) =>
    tokens.get(`keymgmt:use:${kid}`).then((token) => api(`${https}/api/crypto/${path}`, token, { kid, ...body }))
  const sealed = (await use(tokensA, a.https, kids.aes, 'cipher/encrypt', { alg: 'AES256-GCM', msg: b64(msg) })).json
  const macA = (await use(tokensA, a.https, kids.hmac, 'hmac/hash', { msg: b64(msg) })).json.mac
  const encaps = (await use(tokensA, a.https, kids.kem, 'pqc/mlkem/encaps', {})).json
  const pubkeys: Record<string, string> = {}
  const listA = await keyList(a.https, await tokensA.get('keymgmt:list'))
  for (const kid of Object.values(kids))
    pubkeys[kid] = (await api(`${a.https}/api/keymgmt/get/${kid}`, await tokensA.get('keymgmt:get'))).json.pubkey

  const master = await login(a.base, 'system:backup', MASTER_PASS)
  t.equal((await setBackupPassphrase(a.https, master)).status, 200, 'the master sets the backup passphrase')
  let started = performance.now()
  const download = await downloadBackup(a.https, master)
  t.comment(
    `backup of ${listA.length} keys: ${download.bytes.length} bytes in ${(performance.now() - started).toFixed(0)} ms`,
  )
  t.equal(download.status, 200, 'A hands out a backup')
  t.match(
    download.headers['content-disposition'],
    new RegExp(`^attachment; filename="hem-${a.device.devid}-\\d+\\.hembackup"$`),
  )
  const file = download.bytes
  const sha256 = createHash('sha256').update(file).digest('hex')
  const header = readBackupHeader(file)
  t.same([header.devid, header.keys], [a.device.devid, 8], 'the header names A and the key count')
  t.same(Buffer.from(header.logKey), Buffer.from(a.device.logPublicKey), "and A's log key")

  const backups = (await readJournal(a.device.dataDir)).records.filter((r) => r.type === LogType.BACKUP)
  t.equal(backups.length, 1, 'A journals one BACKUP')
  t.same(backups[0]?.decoded?.sha256, sha256, "with the file's SHA-256")
  t.same(
    backups[0]?.decoded?.head,
    {
      file: header.head.file,
      seq: header.head.seq,
      chain: Buffer.from(header.head.chain).toString('hex'),
    },
    'and the head the file covers',
  )
  t.notMatch(JSON.stringify((await readJournal(a.device.dataDir)).records), BACKUP_PASS, 'no passphrase in the journal')

  const b = await bootDevice(t, { dataDir: join(dir, 'b'), variant: 'E' })
  t.not(b.devid, a.device.devid, 'B is another device')
  const staged = await uploadBackup(b.httpsUrl!, file)
  t.same([staged.status, staged.json], [200, { size: file.length, sha256 }], 'B stages the file')
  started = performance.now()
  const restored = await restoreWith(b.httpsUrl!)
  t.comment(`restore of ${listA.length} keys: ${(performance.now() - started).toFixed(0)} ms (scrypt included)`)
  t.same(
    [restored.status, restored.json],
    [200, { source: a.device.devid, keys: 8, sha256 }],
    `B is restored: ${restored.text.slice(0, 300)}`,
  )

  const tokensB = new Tokens(b.httpUrl!)
  t.same(await keyList(b.httpsUrl!, await tokensB.get('keymgmt:list')), listA, 'the same KIDs, labels and types')
  for (const kid of Object.values(kids)) {
    const got = await api(`${b.httpsUrl}/api/keymgmt/get/${kid}`, await tokensB.get('keymgmt:get'))
    t.equal(got.json.pubkey, pubkeys[kid], `${kid}: the same public key`)
  }
  const opened = await use(tokensB, b.httpsUrl!, kids.aes, 'cipher/decrypt', {
    alg: 'AES256-GCM',
    msg: sealed.ciphertext,
    iv: sealed.iv,
    tag: sealed.tag,
  })
  t.equal(Buffer.from(opened.json.plaintext, 'base64').toString(), msg.toString(), "A's ciphertext decrypts on B")
  t.equal((await use(tokensB, b.httpsUrl!, kids.hmac, 'hmac/hash', { msg: b64(msg) })).json.mac, macA, 'the same MAC')
  const decaps = await use(tokensB, b.httpsUrl!, kids.kem, 'pqc/mlkem/decaps', { ct: encaps.ct })
  t.equal(decaps.json.ss, encaps.ss, "B decapsulates A's ML-KEM ciphertext to the same secret")
  for (const [kid, path, body] of [
    [kids.ed, 'exdsa', { alg: 'Ed25519' }],
    [kids.ecdsa, 'exdsa', { alg: 'SHA256WithECDSA' }],
    [kids.dsa, 'pqc/mldsa', {}],
  ] as const) {
    const signed = await use(tokensB, b.httpsUrl!, kid, `${path}/sign`, { msg: b64(msg), ...body })
    t.equal(signed.status, 200, `${kid}: B signs`)
    const checked = await use(tokensA, a.https, kid, `${path}/verify`, {
      msg: b64(msg),
      sign: signed.json.sign,
      ...body,
    })
    t.equal(checked.status, 200, `${kid}: A verifies B's signature with its public key`)
    if (kid === kids.ed) t.ok(ed25519.verify(bytesOf(signed.json.sign), msg, bytesOf(pubkeys[kid]!)), 'noble too')
  }

  const configOf = async (base: string) => {
    const { nonce: _n, ...config } = (await api(`${base}/api/system/config`, await login(base, 'system:config'))).json
    return config
  }
  const [configA, configB] = [await configOf(a.base), await configOf(b.httpUrl!)]
  for (const field of ['user', 'email', 'hostname', 'origin', 'allow_keysearch', 'trusted_ts', 'instanceid'])
    t.same(configB[field], configA[field], `config ${field}`)
  t.equal(configB.email, 'ada@restored.example', "A's change came along")

  const journalB = (await readJournal(b.dataDir)).records
  const owner = journalB.filter((r) =>
    [LogType.DEVICE_INITED, LogType.RESTORE, LogType.KEY_GENERATION].includes(r.type as never),
  )
  t.equal(owner[0]?.type, LogType.RESTORE, "B's owner history starts with RESTORE (no DEVICE_INITED)")
  t.equal(owner[0]?.result, LogResult.OK)
  t.match(
    owner[0]?.decoded,
    {
      source: { devid: a.device.devid, log_key: b64(a.device.logPublicKey), head: backups[0]?.decoded?.head },
      sha256,
      keys: 8,
    },
    'RESTORE names A, the file and the head it covers',
  )
  t.notMatch(JSON.stringify(journalB), BACKUP_PASS, "no passphrase in B's journal")
  t.not(
    Buffer.from(b.logPublicKey).toString('hex'),
    Buffer.from(a.device.logPublicKey).toString('hex'),
    'B keeps its log key',
  )
  const verified = await verifyDataDir(b.dataDir, b.logPublicKey, true)
  t.ok(verified.ok, "B's journal verifies")
  // E serves no log files: the files as an auditor copies them off the device, verified as hem-audit verifies them.
  const { files } = await readJournal(b.dataDir)
  const replay = replayDevice(files, b.logPublicKey, { allowOpenTail: true, trustOpenTail: true })
  t.equal(replay.personalisation, 'personalised', 'the replay: personalised')
  t.same(Object.keys(replay.keyStates).sort(), Object.keys(Object.fromEntries(listA.map((k) => [k.kid, 1]))).sort())
  t.ok(
    Object.values(replay.keyStates).every((s) => s === 'in_service'),
    'every restored key in service',
  )
  t.same(
    replay.keys,
    Object.fromEntries(listA.map(({ kid, type, created, updated }) => [kid, { type, created, updated }])),
  )
  t.equal(replay.config.email, 'ada@restored.example', 'and the configuration')
  t.notOk('inited' in (await call(`${b.httpUrl}/api/system/status`)).json, 'B is personalised (status drops inited)')
})

async function keyList(https: string, token: string) {
  const answer = await api(`${https}/api/keymgmt/list/0/100`, token)
  const list = answer.json.list as { kid: string; type: string; created: number; updated: number; label: string }[]
  return list.sort((x, y) => (x.kid < y.kid ? -1 : 1))
}

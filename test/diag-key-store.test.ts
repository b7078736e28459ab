// The key store as the certification scripts see it (crypto-contract §6): list entries say where each
// record sits, a dump shows only sealed bytes, a delete overwrites its record; a record damaged with
// corrupt_repo is found by the self-test and by every boot after, until wipe_config erases the store.
import t from 'tap'
import { FLS } from '../protocol/fail-state.js'
import { LogType } from '../protocol/journal.js'
import { diagOk, flsShown, rebootOver, selfTest } from './helpers/diag.js'
import { expectFresh } from './helpers/fresh-device.js'
import { readJournal } from './helpers/journal.js'
import { rawExchange, requestHead } from './helpers/raw-http.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { boots, rebooted } from './helpers/model-device.js'
import { owned } from './helpers/owner.js'

interface Listed {
  kid: string
  label: string
  _addr: number
  _len: number
}

async function listed(https: string, token: string): Promise<Listed[]> {
  const answer = await api(`${https}/api/keymgmt/list`, token)
  if (answer.status !== 200) throw new Error(`list: ${answer.status} ${answer.text}`)
  return answer.json.list as Listed[]
}

async function dump(base: string, addr: number, len: number): Promise<Buffer> {
  const answer = await diagOk(base, `memdump/${addr}/${len}`)
  if (answer.json.address !== addr || answer.json.length !== len) throw new Error(`memdump: ${answer.text}`)
  return Buffer.from(answer.json.dump as string, 'base64')
}

t.test('_addr and _len place each record; a dump shows nothing in clear; a delete overwrites it', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { diag: true } })
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  // The largest record (ML-DSA-87: a 2592-byte public key) still fits one dump.
  const types = ['AES256', 'ED25519', 'MLDSA87']
  // descr is bytes (base64 in the API): neither they nor their base64 may show.
  const descr = Buffer.from('a description the dump must not show')
  for (const type of types) await createKey(o.https, gen, { label: `label-of-${type}`, type, descr: b64(descr) })
  const keys = await listed(o.https, await tokens.get('keymgmt:list'))
  t.equal(keys.length, types.length)
  t.equal(new Set(keys.map((k) => k._addr)).size, keys.length, 'one address per record')
  const getter = await tokens.get('keymgmt:get')
  for (const key of keys) {
    t.ok(Number.isInteger(key._addr) && key._addr % 32 === 0, `${key.label}: _addr ${key._addr} 32-byte aligned`)
    t.ok(Number.isInteger(key._len) && key._len > 0 && key._len <= 4095, `${key.label}: _len ${key._len} ≤ 4095`)
    const bytes = await dump(o.base, key._addr, key._len)
    t.equal(bytes.length, key._len)
    t.ok(
      bytes.subarray(4, 8).some((b) => b !== 0),
      `${key.label}: bytes 4–7 are not all zero`,
    )
    for (const [what, clear] of [
      ['label', Buffer.from(key.label)],
      ['descr', descr],
      ['descr in base64', Buffer.from(b64(descr))],
    ] as const)
      t.equal(bytes.indexOf(clear), -1, `${key.label}: no ${what} in clear`)
    const pubkey = (await api(`${o.https}/api/keymgmt/get/${key.kid}`, getter)).json.pubkey as string | undefined
    if (pubkey) t.equal(bytes.indexOf(Buffer.from(pubkey, 'base64')), -1, `${key.label}: no public key in clear`)
  }
  const largest = keys.find((k) => k.label === 'label-of-MLDSA87')!
  t.comment(`the ML-DSA-87 record is ${largest._len} bytes`)

  const [gone] = keys
  const before = await dump(o.base, gone!._addr, gone!._len)
  const deleted = await api(
    `${o.https}/api/keymgmt/delete/${gone!.kid}`,
    await tokens.get('keymgmt:del'),
    undefined,
    'DELETE',
  )
  t.equal(deleted.status, 200, deleted.text)
  t.not(
    (await dump(o.base, gone!._addr, gone!._len)).toString('hex'),
    before.toString('hex'),
    'the delete overwrote it',
  )
})

t.test('without --diag a list entry has no _addr or _len', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'plain', type: 'AES256' })
  const [key] = await listed(o.https, await tokens.get('keymgmt:list'))
  t.notOk('_addr' in key! || '_len' in key!)
})

t.test('corrupt_repo: the self-test finds the record bad, every boot after too, until wipe_config', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { diag: true } })
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  for (const label of ['damaged', 'intact']) await createKey(o.https, gen, { label, type: 'AES256' })
  const config = await tokens.get('system:config')
  const target = (await listed(o.https, await tokens.get('keymgmt:list'))).find((k) => k.label === 'damaged')!

  const corrupted = await diagOk(o.base, `corrupt_repo/${target._addr}`)
  t.same(corrupted.json, { address: target._addr, status: 1 })
  t.same([...(await dump(o.base, target._addr + 4, 4))], [0, 0, 0, 0], 'bytes 4–7 zeroed on the media')

  const found = await selfTest(o.base, config)
  t.equal(found.status, 200)
  t.match(found.json, { fls_state: FLS.INTEGRITY, repo_stats: { total: 2, invalid: 1 } }, 'the self-test finds it')
  await flsShown(o.base, FLS.INTEGRITY)
  const integrity = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR)
  t.match(integrity, [{ decoded: { invalid: 1 } }], 'KEY_INTEGRITY_ERROR journaled once')
  t.equal((await selfTest(o.base, config)).json.repo_stats.invalid, 1, 'a second self-test: still one')
  t.equal(
    (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR).length,
    1,
    '...and not journaled again',
  )

  await rebootOver(o.base, o.device.dataDir, config)
  await flsShown(o.base, FLS.INTEGRITY)
  t.pass('the boot finds the damaged record again: a reboot does not clear it')
  const afterBoot = await selfTest(o.base, await new Tokens(o.base).get('system:config'))
  t.match(afterBoot.json, { fls_state: FLS.INTEGRITY, repo_stats: { invalid: 1 } })

  const before = await boots(o.device.dataDir)
  // Kept alive by the client: the device closes it after its answer.
  const wiped = await rawExchange(
    { port: Number(new URL(o.base).port), tls: false },
    { steps: [requestHead('GET', '/api/diag/wipe_config', [['Host', '127.0.0.1']])], responses: 2, timeoutMs: 20_000 },
  )
  t.match(wiped.responses, [{ status: 200, body: Buffer.alloc(0) }], 'wipe_config answers an empty 200')
  t.ok(wiped.closed && !wiped.timedOut, 'then the connection closes')
  await rebooted(o.base, o.device.dataDir, before)
  await expectFresh(t, o.base, o.device.dataDir, 'P')
  t.match((await selfTest(o.base)).json, { fls_state: 0, repo_stats: { total: 0, invalid: 0 } }, 'a fresh store')
  const { records } = await readJournal(o.device.dataDir)
  t.ok(
    records.some((r) => r.type === LogType.CONFIG_UPDATED && r.decoded?.wipeout === true && r.decoded?.diag === true),
    'journaled as a DIAG wipeout',
  )
})

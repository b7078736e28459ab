// The keystore's DIAG operations over a real bus and HAL (crypto-contract §6): the key store image
// dumped and damaged without a token, `_addr`/`_len` in key lists; and its record check for the
// self-test (verify_records), which only the system may ask for and which exists in every build.
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import { followReadModels } from '../bus/follow-read-models.js'
import type { CommandReply, CommandRequest } from '../protocol/bus-messages.js'
import type { RecordCheck } from '../protocol/diag.js'
import { LogType } from '../protocol/journal.js'
import type { KeystoreState } from '../protocol/keystore-state.js'
import { until } from './helpers/until.js'
import { identity, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'

const IMAGE = 1024 * 4096

type Body = Record<string, unknown>

async function diagKeystore(t: Test, diag: boolean) {
  const scripted = await scriptedIdentity(t, 'E', identity(true))
  const logged: Body[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line) as Body) })
  const start = async () => {
    const actor = await KeystoreActor.start({
      nc: await scripted.connect('keystore'),
      hal: scripted.hal,
      journal: scripted.journal,
      logger,
      ...(diag ? { diag } : {}),
    })
    t.teardown(() => actor.stop())
    return actor
  }
  const keystore = await start()
  const gateway = await scripted.gatewayView(['keystore'])
  const system = followReadModels(await scripted.connect('system'), scripted.hal.devid, 'system', [], logger)
  t.teardown(() => system.close())
  let n = 0
  const ask = async (op: string, req: Omit<CommandRequest, 'rid' | 'tls'> = {}) => {
    const reply: CommandReply = await gateway.request('keystore', op, { rid: `r-${++n}`, tls: true, ...req })
    return { status: reply.status, body: (reply.body ?? {}) as Body }
  }
  const dump = async (addr: number, len: number) => {
    const reply = await ask('diag_memdump', { params: { addr: String(addr), len: String(len) } })
    t.equal(reply.status, 200, `memdump ${addr} ${len}`)
    return Buffer.from(reply.body.dump as string, 'base64')
  }
  const create = async (type: string, descr?: string) => {
    const body = { label: `${type} key`, type, ...(descr ? { descr } : {}) }
    const reply = await ask('create', { bearer: scriptedBearer('U', 'keymgmt:gen'), body })
    t.equal(reply.status, 200, `a ${type} key`)
    return reply.body.kid as string
  }
  const list = async () => (await ask('list', { bearer: scriptedBearer('U', 'keymgmt:list') })).body.list as Body[]
  const verify = async () => {
    const reply = await system.request('keystore', 'verify_records', { rid: `v-${++n}`, tls: false })
    t.equal(reply.status, 200, 'verify_records answers')
    return reply.body as RecordCheck
  }
  const integrityErrors = () => scripted.journaled.filter((e) => e.type === LogType.KEY_INTEGRITY_ERROR)
  return { ...scripted, keystore, start, gateway, ask, dump, create, list, verify, integrityErrors, logged }
}

t.test('DIAG: lists locate records, dumps read the image, a delete overwrites, no token needed', async (t) => {
  const d = await diagKeystore(t, true)
  const descr = Buffer.from('a description to look for').toString('base64')
  const aes = await d.create('AES256', descr)
  const ed = await d.create('ED25519')
  const listed = await d.list()
  t.same(
    listed.map((key) => [key.kid, key._addr, key._len]),
    [
      [aes, 0, listed[0]!._len],
      [ed, 4096, listed[1]!._len],
    ],
    'each list entry says where its record sits',
  )
  t.ok(
    listed.every((key) => (key._addr as number) % 32 === 0 && (key._len as number) <= 4095),
    'aligned, at most 4095',
  )
  const got = await d.ask('get', { bearer: scriptedBearer('U', 'keymgmt:get'), params: { kid: ed } })
  t.equal(got.status, 200)
  t.notOk('_addr' in got.body || '_len' in got.body, 'get shows no location')
  const searched = await d.ask('search', {
    bearer: scriptedBearer('U', 'keymgmt:search'),
    body: { descr: `^${descr}` },
  })
  t.same(
    (searched.body.list as Body[]).map((key) => [key.kid, '_addr' in key || '_len' in key]),
    [[aes, false]],
    'search shows no location',
  )

  const len = listed[0]!._len as number
  const record = await d.dump(0, len)
  t.same(record, Buffer.from(await d.hal.keySlots.read(0, len)), 'the dump is the media')
  t.same(
    await d
      .ask('diag_memdump', { params: { addr: '0', len: String(len) } })
      .then((r) => [r.body.address, r.body.length]),
    [0, len],
    'address and length answered as numbers',
  )
  const pubkey = (await d.ask('get', { bearer: scriptedBearer('U', 'keymgmt:get'), params: { kid: ed } })).body
    .pubkey as string
  const image = Buffer.concat([await d.dump(0, 4095), await d.dump(4095, 4095), await d.dump(IMAGE - 4095, 4095)])
  for (const [name, bytes] of [
    ['label', Buffer.from('AES256 key')],
    ['descr', Buffer.from(descr, 'base64')],
    ['public key', Buffer.from(pubkey, 'base64')],
  ] as const)
    t.notOk(image.includes(bytes), `no ${name} in clear`)

  t.equal((await d.ask('delete', { bearer: scriptedBearer('U', 'keymgmt:del'), params: { kid: aes } })).status, 200)
  t.notSame(await d.dump(0, len), record, 'the dump after the delete differs')
  t.same(
    d.logged.filter((line) => line.op === 'diag_memdump').map((line) => [line.level, Object.keys(line).sort()]),
    Array.from({ length: 6 }, () => [40, ['address', 'hostname', 'length', 'level', 'msg', 'op', 'pid', 'time']]),
    'every dump is in the ops log at warn: where, never what',
  )
})

t.test('DIAG: a damaged record stays in memory until the record check, which finds it once', async (t) => {
  const d = await diagKeystore(t, true)
  const aes = await d.create('AES256')
  const kept = await d.create('SECP256R1')
  const clean = await d.verify()
  t.same(clean, {
    intact: true,
    newlyInvalid: 0,
    repo_stats: { total: 2, deleted: 0, invalid: 0, fragmented: 0, freeslots: 1022 },
  })

  const corrupt = await d.ask('diag_corrupt_repo', { params: { addr: '0' } })
  t.same(corrupt, { status: 200, body: { address: 0, status: 1 } })
  t.same([...(await d.dump(4, 4))], [0, 0, 0, 0], 'bytes 4 to 7 zeroed')
  t.equal((await d.list()).length, 2, 'memory is not touched: the key is still listed')
  t.equal(d.integrityErrors().length, 0, 'nothing journaled yet')
  t.ok(d.logged.some((line) => line.op === 'diag_corrupt_repo' && line.level === 40 && line.address === 0))

  const found = await d.verify()
  t.same(found, {
    intact: false,
    newlyInvalid: 1,
    repo_stats: { total: 2, deleted: 0, invalid: 1, fragmented: 0, freeslots: 1022 },
  })
  t.same(
    d.integrityErrors().map((e) => e.data),
    [{ invalid: 1, problems: ['slot 0: generation or serial is zero'] }],
    'KEY_INTEGRITY_ERROR journaled: the slot and the fault, no key bytes',
  )
  t.equal((d.keystore.host.state as KeystoreState).fls & 0x08, 0x08, 'fls 0x08 in the read model')
  await until('the gateway sees fls 0x08', async () => (d.gateway.readModel<KeystoreState>('keystore')?.fls ?? 0) === 8)
  const use = await d.ask('list', { bearer: scriptedBearer('U', 'keymgmt:list') })
  t.equal(use.status, 409, 'keys are refused in the fail state')
  t.equal(d.keystore.repository.has(aes), false, 'the damaged key left memory')
  t.equal(d.keystore.repository.has(kept), true)
  t.same(await d.verify(), { ...found, newlyInvalid: 0 }, 'found once')
  t.equal(d.integrityErrors().length, 1, 'journaled once')

  await d.keystore.stop()
  const again = await d.start()
  t.equal(d.integrityErrors().length, 2, 'a reboot finds the damage too')
  t.same(d.integrityErrors()[1]!.data, d.integrityErrors()[0]!.data)
  t.equal((again.host.state as KeystoreState).fls & 0x08, 0x08)
})

t.test('DIAG: params are checked strictly, each rule a 400 with a clear message', async (t) => {
  const d = await diagKeystore(t, true)
  const refused = async (op: string, params: Record<string, string>, message: RegExp) => {
    const reply = await d.ask(op, { params })
    t.equal(reply.status, 400, `${op} ${JSON.stringify(params)}`)
    t.equal(reply.body.error, 'bad_request')
    t.match(reply.body.message, message)
  }
  const digits = /`(addr|len)` must be a decimal number of 1 to 10 digits/
  for (const bad of ['', '-1', '+1', '0x10', '1e3', ' 1', '1.0', '12345678901', 'a']) {
    await refused('diag_memdump', { addr: bad, len: '1' }, digits)
    await refused('diag_memdump', { addr: '0', len: bad }, digits)
    await refused('diag_corrupt_repo', { addr: bad }, digits)
  }
  await refused('diag_memdump', { len: '1' }, digits)
  await refused('diag_memdump', { addr: '0' }, digits)
  await refused('diag_corrupt_repo', {}, digits)
  await refused('diag_memdump', { addr: '0', len: '0' }, /`len` must be from 1 to 4095/)
  await refused('diag_memdump', { addr: '0', len: '4096' }, /`len` must be from 1 to 4095/)
  await refused('diag_memdump', { addr: String(IMAGE - 10), len: '11' }, /must not pass the end .*4194304 bytes/)
  await refused('diag_memdump', { addr: '9999999999', len: '1' }, /must not pass the end/)
  await refused('diag_corrupt_repo', { addr: '16' }, /`addr` must be a multiple of 32/)
  await refused('diag_corrupt_repo', { addr: String(IMAGE) }, /`addr` must lie within the key store image/)
  t.equal(
    (await d.ask('diag_memdump', { params: { addr: String(IMAGE - 10), len: '10' } })).status,
    200,
    'the last bytes',
  )
  t.equal((await d.ask('diag_corrupt_repo', { params: { addr: String(IMAGE - 32) } })).status, 200, 'the last 32')
  t.same(
    await d.verify(),
    { intact: true, newlyInvalid: 0, repo_stats: { total: 0, deleted: 0, invalid: 0, fragmented: 0, freeslots: 1024 } },
    'zeros over zeros damage nothing',
  )
})

t.test('without DIAG: no diag operation, no location in lists; the record check still answers', async (t) => {
  const d = await diagKeystore(t, false)
  const kid = await d.create('AES128')
  for (const [op, params] of [
    ['diag_memdump', { addr: '0', len: '16' }],
    ['diag_corrupt_repo', { addr: '0' }],
  ] as const) {
    const reply = await d.ask(op, { params })
    t.same([reply.status, reply.body.error], [404, 'unknown_operation'], `${op}: no handler`)
  }
  t.same(
    (await d.list()).map((key) => Object.keys(key).sort()),
    [['created', 'kid', 'label', 'type', 'updated']],
    'no _addr, no _len',
  )
  t.same(await d.verify(), {
    intact: true,
    newlyInvalid: 0,
    repo_stats: { total: 1, deleted: 0, invalid: 0, fragmented: 0, freeslots: 1023 },
  })
  t.equal(d.integrityErrors().length, 0, 'an intact store: nothing journaled')
  t.equal((d.keystore.host.state as KeystoreState).fls, 0, 'nothing raised')
  t.ok(d.keystore.repository.has(kid))
})

// The audit log over the API (device contract §3, §4): the log key, the file list, the files.
import { createPublicKey, verify } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { CHUNK_BYTES, LIST_PAGE } from '../actors/logger/logger-actor.js'
import { Journal, verifyJournal } from '../eventstore/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { verifyClientStyle } from '../audit/index.js'
import { openHal } from '../hal/index.js'
import { builtFirmware } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'

const SMALL_FILES = LIST_PAGE + 12

/**
 * A device whose journal already holds a big file (several bus chunks) and more small files than
 * one list page, all written by the device's own journal code and log key before it boots.
 */
async function seedJournal(dataDir: string): Promise<void> {
  const hal = await openHal({ variant: 'P', dataDir, firmware: await builtFirmware() })
  const base = {
    media: hal.journal,
    signer: hal.enclave.logSigner,
    clock: hal.clock,
    random: (n: number) => hal.entropy.read(n),
    banner: '# seeded journal {id}',
  }
  const big = await Journal.open(base)
  const filler = 'x'.repeat(300)
  for (let i = 0; i < 1200; i++)
    await big.append([
      { type: LogType.CONFIG_UPDATED, result: LogResult.OK, subject: 'U', data: { source: 200, filler, i } },
    ])
  await big.close()
  const small = await Journal.open({ ...base, rotateBytes: 1 })
  for (let i = 0; i < SMALL_FILES; i++)
    await small.append([{ type: LogType.CONFIG_UPDATED, result: LogResult.OK, subject: 'U', data: { source: 200, i } }])
  await small.close()
  await hal.close()
}

function verifiesNonce(key: string, nonce: string, signature: string): boolean {
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key, 'base64').toString('base64url') },
    format: 'jwk',
  })
  return verify(null, Buffer.from(nonce, 'base64'), publicKey, Buffer.from(signature, 'base64'))
}

t.test('P: log key, list pages, files downloaded and verified both ways', async (t) => {
  const dataDir = t.testdir()
  await seedJournal(dataDir)
  const o = await owned(t, { variant: 'P', dataDir })
  const token = await login(o.base, 'logger:get')
  const url = (path: string) => `${o.base}/api/logger/${path}`
  const version = (await api(`${o.base}/api/system/version`, token)).json
  t.match(
    version,
    { sd_csd: /^[0-9a-f]{32}$/, sd_cid: /^[0-9a-f]{32}$/ },
    'P with a valid token: the card registers from the HAL',
  )

  await t.test('the log key signs a fresh timed nonce', async (t) => {
    const before = Math.floor(Date.now() / 1000)
    const first = await api(url('key'), token)
    const after = Math.ceil(Date.now() / 1000)
    t.equal(first.status, 200)
    t.equal(first.json.key, Buffer.from(o.device.logPublicKey).toString('base64'))
    const nonce = Buffer.from(first.json.nonce, 'base64')
    t.equal(nonce.length, 32)
    const time = nonce.readUInt32LE(0)
    t.ok(time >= before && time <= after, 'bytes 0-3: the time, little-endian')
    t.ok(verifiesNonce(first.json.key, first.json.nonce, first.json.nonce_signed), 'Ed25519 over the raw nonce')
    t.not((await api(url('key'), token)).json.nonce, first.json.nonce, 'fresh each time')
  })

  const onDisk = (await readdir(join(dataDir, 'journal'))).map((name) => name.slice(0, 8)).sort()
  await t.test('list: 128 ids per page, oldest first, offset paging', async (t) => {
    const page = await api(url('list'), token)
    t.equal(page.status, 200)
    t.equal(page.json.total, onDisk.length)
    t.ok(page.json.total > LIST_PAGE, `${page.json.total} files`)
    t.same(page.json.id, onDisk.slice(0, LIST_PAGE))
    t.same((await api(url('list/0'), token)).json, page.json)
    t.same((await api(url(`list/${LIST_PAGE}`), token)).json.id, onDisk.slice(LIST_PAGE))
    t.equal((await api(url('list/abc'), token)).status, 400)
    t.equal((await api(url('list/-1'), token)).status, 400)
    t.equal((await api(url(`list/${onDisk.length}`), token)).status, 404, 'past the last file')
    t.equal((await api(url('list'), await login(o.base, 'system:config'))).status, 403)
  })

  const downloaded: { id: string; bytes: Uint8Array }[] = []
  await t.test('every file downloads as stored; the open one up to its last complete line', async (t) => {
    const live = (await api(url('list'), token)).json.total as number
    const ids = [
      ...(await api(url('list'), token)).json.id,
      ...(await api(url(`list/${LIST_PAGE}`), token)).json.id,
    ] as string[]
    t.equal(ids.length, live)
    for (const id of ids) {
      const answer = await call(url(id), { headers: { authorization: `Bearer ${token}` } })
      const bytes = new Uint8Array(Buffer.from(answer.text, 'utf8'))
      if (answer.status !== 200) t.fail(`${id}: ${answer.status}`)
      if (answer.headers['content-type'] !== 'text/plain') t.fail(`${id}: ${String(answer.headers['content-type'])}`)
      if (Number(answer.headers['content-length']) !== bytes.length) t.fail(`${id}: Content-Length`)
      if (answer.headers['transfer-encoding'] !== undefined) t.fail(`${id}: chunked`)
      downloaded.push({ id, bytes })
    }
    const stored = await Promise.all(ids.map((id) => readFile(join(dataDir, 'journal', `${id}.log`))))
    const closed = downloaded.slice(0, -1)
    t.ok(
      closed.every(({ bytes }, i) => Buffer.from(bytes).equals(stored[i]!)),
      'closed files byte for byte',
    )
    const current = downloaded.at(-1)!.bytes
    t.ok(
      current.at(-1) === 0x0a && stored.at(-1)!.subarray(0, current.length).equals(current),
      'the open file: a prefix of whole lines',
    )
    const big = downloaded.find(({ bytes }) => bytes.length > 3 * CHUNK_BYTES)
    t.ok(big, 'a file of several bus chunks came through whole')
  })

  await t.test("the downloads verify the clients' way and the hem-audit way; an edit does not", async (t) => {
    const key = o.device.logPublicKey
    for (const { id, bytes } of downloaded) {
      const result = verifyClientStyle(bytes, key)
      if (!result.ok) t.fail(`${id}: ${result.problems.join('; ')}`)
    }
    const all = verifyJournal(downloaded, key, { allowOpenTail: true })
    const open = downloaded.at(-1)!.id
    t.ok(
      all.problems.length > 0 && all.problems.every((p) => p.file === open && p.message.startsWith('unverified')),
      'hem-audit: only the open tail, which no seal or signed head covers, is unverified: ' +
        JSON.stringify(all.problems.slice(0, 3)),
    )
    const tampered = downloaded.map((file) => ({ ...file, bytes: Uint8Array.from(file.bytes) }))
    const victim = tampered[3]!.bytes
    victim[victim.length - 30]! ^= 0x01
    t.notOk(verifyClientStyle(victim, key).ok, 'one flipped bit fails the per-line MAC')
    t.notOk(verifyJournal(tampered, key, { allowOpenTail: true }).ok, 'and the chain')
    t.notOk(
      verifyJournal(
        downloaded.filter((_, i) => i !== 5),
        key,
        { allowOpenTail: true },
      ).ok,
      'a missing file breaks the links',
    )
  })

  await t.test('unknown or malformed ids are 404, journaled with the id', async (t) => {
    for (const id of ['00000001', 'zzzzzzzz', '1234567', 'FFFFFFFF'])
      t.equal((await api(url(id), token)).status, 404, id)
    const reads = (await readJournal(dataDir)).records.filter((r) => r.type === LogType.LOGGER_READ_LOG)
    t.equal(reads.filter((r) => r.result === LogResult.OK && r.decoded?.source === 200).length, downloaded.length)
    t.same(
      reads.filter((r) => r.result === LogResult.FAILED).map((r) => [r.decoded?.source, r.decoded?.id]),
      [
        [404, '00000001'],
        [404, 'zzzzzzzz'],
        [404, '1234567'],
        [404, 'FFFFFFFF'],
      ],
    )
    const lists = (await readJournal(dataDir)).records.filter((r) => r.type === LogType.LOGGER_LIST_LOG)
    t.ok(lists.some((r) => r.result === LogResult.FAILED && r.decoded?.source === 404))
    t.ok(lists.filter((r) => r.result === LogResult.OK).every((r) => r.decoded?.source === 200 && r.subject === 'U'))
  })
})

t.test('E: the log key only; list and files are 404', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const token = await login(o.base, 'logger:get')
  t.equal((await api(`${o.base}/api/logger/key`, token)).status, 200)
  const id = (await readdir(join(o.device.dataDir, 'journal')))[0]!.slice(0, 8)
  for (const path of ['list', 'list/0', id])
    t.equal((await api(`${o.base}/api/logger/${path}`, token)).status, 404, path)
  t.equal((await api(`${o.base}/api/logger/key`, undefined)).status, 401)
})

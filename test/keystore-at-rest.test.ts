// Keys at rest: sealed by the enclave, checked at boot, surviving reboots, erased by a wipeout;
// and the boot KATs that choose the crypto engine.
import { createCipheriv } from 'node:crypto'
import { readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { KeyRepository } from '../actors/keystore/key-repository.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { nativeEngine, nobleEngine, type CryptoEngine } from '../hal/crypto/index.js'
import { openHal } from '../hal/index.js'
import { bootDevice, builtFirmware } from './helpers/device.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, bytesOf, createKey } from './helpers/keys.js'
import { login, owned, personalise, type Owned } from './helpers/owner.js'
import { serviceProcesses } from './helpers/service-processes.js'
import { until } from './helpers/until.js'

const BLOCK = Buffer.alloc(16, 0x5a)

async function ecbOfBlock(o: Owned, kid: string): Promise<Buffer> {
  const use = await login(o.base, `keymgmt:use:${kid}`)
  const answer = await api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-ECB', kid, msg: b64(BLOCK) })
  if (answer.status !== 200) throw new Error(`encrypt refused: ${answer.status} ${answer.text}`)
  return Buffer.from(bytesOf(answer.json.ciphertext))
}

/** Every file under `dir`, except those `skip` names. */
async function filesUnder(dir: string, skip: (path: string) => boolean): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    if (entry.isFile() && !skip(path)) found.push(path)
  }
  return found
}

/** Whether any 32 bytes of `data` are the AES-256 key that encrypts BLOCK to `ciphertext`. */
function holdsKey(data: Buffer, ciphertext: Buffer): boolean {
  for (let i = 0; i + 32 <= data.length; i++) {
    const window = data.subarray(i, i + 32)
    if (window.every((b) => b === 0)) continue
    const c = createCipheriv('aes-256-ecb', window, null).setAutoPadding(false)
    if (c.update(BLOCK).equals(ciphertext)) return true
  }
  return false
}

t.test('keys are sealed at rest, survive a reboot, and a wipeout erases them', async (t) => {
  const o = await owned(t)
  const gen = await login(o.base, 'keymgmt:gen')
  const kid = await createKey(o.https, gen, { label: 'at rest', type: 'AES256' })
  const ciphertext = await ecbOfBlock(o, kid)

  await o.device.restart()
  t.same(await ecbOfBlock(o, kid), ciphertext, 'the same key after a reboot')

  await o.device.stop()
  const sealingKey = join(o.device.dataDir, 'enclave', 'sealing.key')
  const files = await filesUnder(o.device.dataDir, (path) => path === sealingKey)
  t.ok(
    files.some((f) => f.endsWith(join('keys', 'slots-4096.bin'))),
    'the repository is among the files scanned',
  )
  let found = false
  for (const file of files) if (holdsKey(await readFile(file), ciphertext)) found = true
  t.notOk(found, 'no file of the data dir holds the key without the sealing key')

  const hal = await openHal({ variant: 'E', dataDir: o.device.dataDir, firmware: await builtFirmware(), lock: false })
  const repository = await KeyRepository.open({
    media: hal.keySlots,
    sealer: hal.enclave.sealer('keys'),
    devid: hal.devid,
  })
  const secret = repository.get(kid)?.secret
  t.ok(
    secret && holdsKey(Buffer.from(secret), ciphertext),
    'with the sealing key the repository opens to the key (the scan would find it)',
  )
  await hal.close()

  const device = await bootDevice(t, { dataDir: o.device.dataDir, variant: 'E' })
  const back: Owned = { ...o, device, base: device.httpUrl!, https: device.httpsUrl! }
  t.same(await ecbOfBlock(back, kid), ciphertext, 'the same key after a restart of hemd')

  const config = await login(back.base, 'system:config')
  t.equal((await api(`${back.base}/api/system/config`, config, { wipeout: true })).status, 200, 'wipeout')
  await until(
    'the reboot after the wipeout',
    async () => (await api(`${back.base}/api/system/config`, config).catch(() => undefined))?.status === 401,
  )
  await until(
    'fresh after the wipeout',
    async () => (await api(`${back.base}/api/system/status`, undefined).catch(() => undefined))?.json?.inited === false,
  )
  const init = await personalise(back.base, 'E')
  t.equal(init.status, 200, 'personalised again')
  const list = await login(back.base, 'keymgmt:list')
  const keys = await api(`${back.https}/api/keymgmt/list`, list)
  t.equal(keys.json.total, 0, 'the new owner finds no key')
  t.same((await api(`${back.base}/api/system/status`, list)).json.repo_stats, {
    total: 0,
    deleted: 0,
    invalid: 0,
    freeespace: 1024,
    fragmentation: 0,
  })
  const slots = await readFile(join(back.device.dataDir, 'keys', 'slots-4096.bin')).catch(() => Buffer.alloc(0))
  t.ok(
    slots.every((b) => b === 0),
    'every slot is zeroed',
  )
})

async function integrityFailure(t: Test, damage: (dataDir: string) => Promise<void>): Promise<void> {
  const o = await owned(t)
  const gen = await login(o.base, 'keymgmt:gen')
  const kid = await createKey(o.https, gen, { label: 'victim', type: 'AES256' })
  await o.device.stop()
  await damage(o.device.dataDir)
  const device = await bootDevice(t, { dataDir: o.device.dataDir, variant: 'E' })
  const status = (await api(`${device.httpUrl}/api/system/status`, undefined)).json
  t.equal(status.fls_state & 0x08, 0x08, 'fls_state shows a data integrity failure')
  const records = (await readJournal(device.dataDir)).records
  const alarm = records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR)
  t.equal(alarm.length, 1, 'KEY_INTEGRITY_ERROR journaled once')
  t.equal(alarm[0]!.result, LogResult.ERROR)
  t.equal(alarm[0]!.decoded?.invalid, 1, 'one invalid slot')
  const use = await login(device.httpUrl!, `keymgmt:use:${kid}`)
  const before = (await readJournal(device.dataDir)).records.length
  const enc = await api(`${device.httpsUrl}/api/crypto/cipher/encrypt`, use, {
    alg: 'AES256-GCM',
    kid,
    msg: b64(BLOCK),
  })
  t.equal(enc.status, 409, 'no cipher while the repository is damaged')
  t.equal(
    (await api(`${device.httpsUrl}/api/keymgmt/list`, await login(device.httpUrl!, 'keymgmt:list'))).status,
    409,
    'no key management either',
  )
  const after = (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.CRYPTO_ENCRYPT)
  t.equal(after.length, 0, 'a 409 is not a cipher operation: not journaled')
  t.ok((await readJournal(device.dataDir)).records.length >= before)
  const repo = (await api(`${device.httpUrl}/api/system/status`, use)).json.repo_stats
  t.equal(repo.invalid, 1, 'repo_stats counts the invalid slot')
}

t.test('a flipped bit in a key slot is found at boot', (t) =>
  integrityFailure(t, async (dataDir) => {
    const path = join(dataDir, 'keys', 'slots-4096.bin')
    const bytes = await readFile(path)
    const used = bytes.findIndex((b, i) => i > 40 && b !== 0)
    bytes[used + 20]! ^= 0x01
    await writeFile(path, bytes)
  }),
)

t.test('without its sealing key the repository does not open', (t) =>
  integrityFailure(t, async (dataDir) => {
    const path = join(dataDir, 'enclave', 'sealing.key')
    t.equal((await stat(path)).size, 32)
    await rm(path)
  }),
)

/** An engine that gets every AES-GCM answer wrong, as a broken accelerator would. */
function broken(engine: CryptoEngine): CryptoEngine {
  return {
    ...engine,
    aesGcmEncrypt: (key, nonce, plaintext, aad) => ({
      ...engine.aesGcmEncrypt(key, nonce, plaintext, aad),
      tag: new Uint8Array(16),
    }),
  }
}

function counting(engine: CryptoEngine, counter: { calls: number }): CryptoEngine {
  return { ...engine, aesGcmEncrypt: (...args) => (counter.calls++, engine.aesGcmEncrypt(...args)) }
}

t.test('boot KATs: native failing falls back to noble; both failing raise fls 0x01', async (t) => {
  await t.test('native fails: the device runs on noble', async (t) => {
    const noble = { calls: 0 }
    const o = await owned(t, {
      boot: { cryptoEngines: { native: broken(nativeEngine), noble: counting(nobleEngine, noble) } },
    })
    t.equal((await api(`${o.base}/api/system/status`, undefined)).json.fls_state, 0, 'no fail state')
    const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'k', type: 'AES256' })
    const calls = noble.calls
    const enc = await api(`${o.https}/api/crypto/cipher/encrypt`, await login(o.base, `keymgmt:use:${kid}`), {
      alg: 'AES256-GCM',
      kid,
      msg: b64(BLOCK),
    })
    t.equal(enc.status, 200)
    t.equal(noble.calls, calls + 1, 'noble encrypted it')
    t.equal((await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.NON_SECURE_STATE).length, 0)
  })
  await t.test('both fail: fls_state 0x01, NON_SECURE_STATE journaled, ciphers refused', async (t) => {
    const o = await owned(t, { boot: { cryptoEngines: { native: broken(nativeEngine), noble: broken(nobleEngine) } } })
    t.equal((await api(`${o.base}/api/system/status`, undefined)).json.fls_state & 0x01, 0x01)
    const alarm = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.NON_SECURE_STATE)
    t.equal(alarm.length, 1)
    t.equal(alarm[0]!.decoded?.fls, 0x01)
    t.match(alarm[0]!.decoded?.detail, { failed: [/GCM/] })
    t.equal(
      (await api(`${o.https}/api/keymgmt/create`, await login(o.base, 'keymgmt:gen'), { label: 'k', type: 'AES256' }))
        .status,
      409,
    )
  })
})

async function opens(pid: number, file: string): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])
  for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === file) return true
  return false
}

t.test('with --split only the keystore process opens the key repository', async (t) => {
  const o = await owned(t, { boot: { split: true } })
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'split', type: 'AES256' })
  const use = await login(o.base, `keymgmt:use:${kid}`)
  const enc = await api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-CBC', kid, msg: b64(BLOCK) })
  t.equal(enc.status, 200)
  const dec = await api(`${o.https}/api/crypto/cipher/decrypt`, use, {
    alg: 'AES256-CBC',
    kid,
    msg: enc.json.ciphertext,
    iv: enc.json.iv,
  })
  t.same(bytesOf(dec.json.plaintext), BLOCK)
  const services = serviceProcesses()
  t.same([...services.keys()].sort(), [
    'auth',
    'eventstore',
    'gateway',
    'keystore',
    'logger',
    'storage',
    'system',
    'upgrade',
  ])
  const slots = join(o.device.dataDir, 'keys', 'slots-4096.bin')
  for (const [name, pid] of services)
    t.equal(
      await opens(pid, slots),
      name === 'keystore',
      `${name} ${name === 'keystore' ? 'holds' : 'does not hold'} the repository open`,
    )
})

// A device whose keys were stored in 512-byte slots (keys/slots.bin, before ML-DSA-87 keys needed
// more) boots with every key, now in 4096-byte slots (keys/slots-4096.bin), and takes the large keys.
import { access, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { bootDevice } from './helpers/device.js'
import { api, createKey, Tokens } from './helpers/keys.js'
import { owned } from './helpers/owner.js'

t.test('the keys of a 512-byte slot file survive the boot that migrates it', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  for (const type of ['AES256', 'SECP256R1', 'ED448', 'SHA3-512']) await createKey(o.https, gen, { label: type, type })
  const del = await tokens.get('keymgmt:del')
  const list = await tokens.get('keymgmt:list')
  const before = (await api(`${o.https}/api/keymgmt/list`, list)).json
  t.equal((await api(`${o.https}/api/keymgmt/delete/${before.list[0].kid}`, del, undefined, 'DELETE')).status, 200)
  const kept = (await api(`${o.https}/api/keymgmt/list`, list)).json
  await o.device.stop()

  // The same slots as hemd wrote them before 4096: each one's first 512 bytes, the rest is zeros.
  const keys = join(o.device.dataDir, 'keys')
  const current = await readFile(join(keys, 'slots-4096.bin'))
  const count = current.length / 4096
  const legacy = Buffer.alloc(count * 512)
  for (let i = 0; i < count; i++) {
    const slot = current.subarray(i * 4096, (i + 1) * 4096)
    t.ok(
      slot.subarray(512).every((byte) => byte === 0),
      `slot ${i} fits 512 bytes`,
    )
    slot.copy(legacy, i * 512, 0, 512)
  }
  await writeFile(join(keys, 'slots.bin'), legacy)
  await rm(join(keys, 'slots-4096.bin'))

  const device = await bootDevice(t, { dataDir: o.device.dataDir, variant: 'E' })
  const base = device.httpUrl!
  const https = device.httpsUrl!
  t.equal((await api(`${base}/api/system/status`, undefined)).json.fls_state, 0, 'no integrity failure')
  const after = new Tokens(base)
  const listed = (await api(`${https}/api/keymgmt/list`, await after.get('keymgmt:list'))).json
  t.same(listed, kept, 'the same keys, deleted slot and order')
  await t.rejects(access(join(keys, 'slots.bin')), { code: 'ENOENT' }, 'the old file is gone')
  const big = await createKey(https, await after.get('keymgmt:gen'), { label: 'large', type: 'MLDSA87' })
  const got = await api(`${https}/api/keymgmt/get/${big}`, await after.get('keymgmt:get'))
  t.equal(got.json.type, 'MLDSA87', 'an ML-DSA-87 key is stored')
})

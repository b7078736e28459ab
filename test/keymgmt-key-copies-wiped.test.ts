// Key material memory no longer holds is wiped: the secret of a record the repository drops (a
// delete, the old version of an update, a wipe), and every expanded post-quantum key at a wipeout,
// even one whose erase of the media failed.
import { pino } from 'pino'
import t from 'tap'
import { createKey, deleteKey, updateKey } from '../actors/keystore/key-management.js'
import { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import { identity, scriptedIdentity } from './helpers/scripted-identity.js'
import { testKeystore } from './helpers/keystore-context.js'

const zero = (bytes: Uint8Array | undefined) => bytes !== undefined && bytes.every((b) => b === 0)

t.test('the repository wipes the secret of each record it drops', async (t) => {
  const ks = await testKeystore(t)
  const create = async (label: string) =>
    ((await createKey(ks.actor, ks.req('keymgmt:gen', { label, type: 'AES256' }))).body as { kid: string }).kid
  const [deleted, updated, wiped] = [await create('d'), await create('u'), await create('w')]
  const record = (kid: string) => ks.actor.repository.get(kid)!

  const gone = record(deleted)
  t.notOk(zero(gone.secret), 'a stored secret')
  t.equal((await deleteKey(ks.actor, { ...ks.req('keymgmt:del', undefined), params: { kid: deleted } })).status, 200)
  t.ok(zero(gone.secret), 'delete: the dropped record is wiped')

  const old = record(updated)
  const secret = Uint8Array.from(old.secret!)
  t.equal((await updateKey(ks.actor, ks.req('keymgmt:upd', { kid: updated, label: 'u2' }))).status, 200)
  t.ok(zero(old.secret), 'update: the old version is wiped')
  t.same(record(updated).secret, secret, 'the new version keeps the key')

  const last = record(wiped)
  await ks.actor.repository.wipe()
  t.ok(zero(last.secret), 'wipe: every record is wiped')
})

t.test('a wipeout wipes the expanded keys, even when erasing the media fails', async (t) => {
  const scripted = await scriptedIdentity(t, 'E', identity(true))
  let failed!: () => void
  const logged = new Promise<void>((resolve) => (failed = resolve))
  const logger = pino({ level: 'error' }, { write: (line: string) => void (line.includes('erasing') && failed()) })
  const keystore = await KeystoreActor.start({
    nc: await scripted.connect('keystore'),
    hal: scripted.hal,
    journal: scripted.journal,
    logger,
  })
  t.teardown(() => keystore.stop())
  const made = await createKey(keystore, {
    rid: 'r',
    tls: true,
    principal: { sub: 'U', scope: 'keymgmt:gen' },
    body: { label: 'pq', type: 'MLKEM512' },
  })
  const kid = (made.body as { kid: string }).kid
  const expanded = Uint8Array.from([1, 2, 3])
  keystore.expanded.get(kid, () => expanded)
  scripted.hal.keySlots.erase = () => Promise.reject(new Error('the media refuses'))
  scripted.auth.publishState(identity(false))
  await logged
  t.ok(keystore.repository.has(kid), 'the erase failed: the key is still stored (the next boot erases it)')
  t.ok(zero(expanded), 'its expanded key is wiped all the same')
})

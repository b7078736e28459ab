// The CLI's pairing store: aid_prv sealed at rest with a passphrase-derived key, mode 0600, a wrong
// passphrase refused even when no pairing is stored, a store others may read refused.
import { randomBytes } from 'node:crypto'
import { chmod, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { PairingFile, PairingFileError } from '../cli/hem-authenticator/pairing-file.js'
import type { PairingRecord } from '../authenticator/index.js'

const PASSPHRASE = 'correct horse battery staple'

async function pairingWithKey(file: PairingFile): Promise<{ pairing: PairingRecord<string>; secret: Uint8Array }> {
  const secret = new Uint8Array(randomBytes(32))
  const pairing: PairingRecord<string> = {
    pid: Buffer.from(randomBytes(32)).toString('base64'),
    eid: Buffer.from(randomBytes(32)).toString('base64'),
    aid: Buffer.from(randomBytes(32)).toString('base64'),
    aidKey: await file.sealer.seal(secret),
    label: 'Test (tap)',
    baseUrl: 'https://api.example',
    created: 1_800_000_000,
  }
  await file.add(pairing)
  return { pairing, secret }
}

t.test('made with mode 0600 in a 0700 folder; the private key is not in the file in clear', async (t) => {
  const path = join(t.testdir(), 'config', 'hem-authenticator', 'pairings.json')
  const file = await PairingFile.open(path, PASSPHRASE)
  const { pairing, secret } = await pairingWithKey(file)
  t.equal((await stat(path)).mode & 0o777, 0o600)
  t.equal((await stat(join(path, '..'))).mode & 0o777, 0o700)
  const text = await readFile(path, 'utf8')
  for (const encoding of ['base64', 'base64url', 'hex'] as const)
    t.notOk(text.includes(Buffer.from(secret).toString(encoding)), `no ${encoding} of aid_prv`)
  const again = await PairingFile.open(path, PASSPHRASE)
  t.same(await again.list(), [pairing])
  t.same(await again.sealer.open(pairing.aidKey), secret, 'the passphrase opens it again')
})

t.test('a wrong passphrase is refused, with or without pairings', async (t) => {
  const dir = t.testdir()
  const empty = join(dir, 'empty.json')
  await PairingFile.open(empty, PASSPHRASE)
  await t.rejects(PairingFile.open(empty, 'wrong'), PairingFileError)
  const full = join(dir, 'full.json')
  await pairingWithKey(await PairingFile.open(full, PASSPHRASE))
  await t.rejects(PairingFile.open(full, 'wrong'), { message: 'the passphrase does not open the pairing store' })
})

t.test('a store others may read is refused', async (t) => {
  const path = join(t.testdir(), 'pairings.json')
  await PairingFile.open(path, PASSPHRASE)
  await chmod(path, 0o644)
  await t.rejects(PairingFile.open(path, PASSPHRASE), /readable by others/)
})

t.test('a changed sealed value does not open', async (t) => {
  const path = join(t.testdir(), 'pairings.json')
  const file = await PairingFile.open(path, PASSPHRASE)
  const { pairing } = await pairingWithKey(file)
  const sealed = Buffer.from(pairing.aidKey, 'base64')
  sealed[20]! ^= 1
  await t.rejects(file.sealer.open(sealed.toString('base64')), { name: 'SealedValueError' })
})

t.test('an edited key derivation is refused before it is run', async (t) => {
  const path = join(t.testdir(), 'pairings.json')
  await PairingFile.open(path, PASSPHRASE)
  const content = JSON.parse(await readFile(path, 'utf8'))
  content.kdf.N = 2 ** 30
  await writeFile(path, JSON.stringify(content), { mode: 0o600 })
  await t.rejects(PairingFile.open(path, PASSPHRASE), /not a hem-authenticator pairing store/)
})

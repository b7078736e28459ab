// The backup file (docs/backup.md): its header round-trips, every altered byte or length is refused, the KDF is
// scrypt (RFC 7914's vector, and the same bytes as node:crypto), and parameters above the device's cap are refused
// before any KDF runs.

import { randomBytes, scryptSync } from 'node:crypto'
import t from 'tap'
import { deriveBackupKey, openBackup, sealBackup, type BackupPayload } from '../actors/keystore/backup-seal.js'
import {
  BACKUP_FORMAT_VERSION,
  BackupFormatError,
  type BackupHeader,
  encodeBackupHeader,
  publicKeyKid,
  readBackupHeader,
  type ScryptParams,
  scryptProblem,
} from '../protocol/index.js'
import { randomKeyRecord } from './helpers/key-records.js'

const FAST: ScryptParams = { log2N: 14, r: 8, p: 1 }
const key = Uint8Array.from(randomBytes(32))

function header(): Omit<BackupHeader, 'version' | 'keys'> {
  return {
    kdf: FAST,
    salt: Uint8Array.from(randomBytes(32)),
    nonce: Uint8Array.from(randomBytes(12)),
    devid: '0123456789abcdef',
    logKey: Uint8Array.from(randomBytes(32)),
    head: { file: '0000002a', seq: 4711, chain: Uint8Array.from(randomBytes(32)) },
    created: 1_790_000_000,
  }
}

function payload(): BackupPayload {
  const pub = randomKeyRecord('ED25519')
  const imported = randomKeyRecord('MLDSA44', { imported: true })
  return {
    cfg: { user: 'Ada', email: 'ada@example.com', hostname: 'hem.example' },
    login: {
      user: Uint8Array.from(randomBytes(32)),
      master: Uint8Array.from(randomBytes(32)),
      salt: randomBytes(32).toString('base64'),
    },
    keys: [
      randomKeyRecord('AES256'),
      { ...pub, kid: publicKeyKid(pub.publicKey!) },
      { ...imported, kid: publicKeyKid(imported.publicKey!) },
    ],
  }
}

const refused = (code: string) => ({ name: 'BackupFormatError', code })

t.test('a sealed file opens again, and its header reads back as written', (t) => {
  const h = header()
  const p = payload()
  const file = sealBackup(key, h, p)
  const read = readBackupHeader(file)
  t.same(read, { ...h, version: BACKUP_FORMAT_VERSION, keys: 3 })
  const opened = openBackup(file, () => key)
  t.same(opened.payload.cfg, p.cfg)
  t.same(opened.payload.login, p.login)
  t.same(
    opened.payload.keys.map((k) => [k.kid, k.type, k.label, Buffer.from(k.secret ?? []).toString('hex')]),
    p.keys.map((k) => [k.kid, k.type, k.label, Buffer.from(k.secret ?? []).toString('hex')]),
  )
  t.end()
})

t.test('every byte of the file is bound: each header field, the ciphertext and the tag', (t) => {
  const file = sealBackup(key, header(), payload())
  const failures: string[] = []
  for (let i = 0; i < file.length; i++) {
    const altered = Uint8Array.from(file)
    altered[i]! ^= 0x01
    try {
      openBackup(altered, () => key)
      failures.push(`byte ${i} altered, still opens`)
    } catch (err) {
      if (!(err instanceof BackupFormatError)) failures.push(`byte ${i}: ${(err as Error).message}`)
    }
  }
  t.same(failures, [], 'every single-bit change is refused as a backup error')
  t.end()
})

t.test('truncation, trailing bytes, a wrong key and another version are refused', (t) => {
  const file = sealBackup(key, header(), payload())
  for (const cut of [0, 5, 20, 120, file.length - 16, file.length - 1])
    t.throws(() => openBackup(file.subarray(0, cut), () => key), refused('bad_backup'), `cut at ${cut}`)
  const longer = new Uint8Array(file.length + 1)
  longer.set(file)
  t.throws(() => readBackupHeader(longer), refused('bad_backup'), 'a trailing byte')
  t.throws(() => openBackup(file, () => Uint8Array.from(randomBytes(32))), refused('bad_backup'), 'another key')
  for (const version of [0, 2, 0xffff]) {
    const other = Uint8Array.from(file)
    new DataView(other.buffer).setUint16(10, version)
    t.throws(() => readBackupHeader(other), refused('unsupported_backup'), `version ${version}`)
  }
  t.end()
})

t.test('a payload that does not match its header or its keys is refused even when sealed right', (t) => {
  const p = payload()
  const wrongKid = { ...p, keys: [{ ...p.keys[1]!, kid: 'ab'.repeat(16) }] }
  t.throws(() => openBackup(sealBackup(key, header(), wrongKid), () => key), refused('bad_backup'), 'KID')
  const twice = { ...p, keys: [p.keys[0]!, p.keys[0]!] }
  t.throws(() => openBackup(sealBackup(key, header(), twice), () => key), refused('bad_backup'), 'duplicate KID')
  t.end()
})

t.test('scrypt: RFC 7914 vector, and node:crypto agrees', async (t) => {
  // RFC 7914 §12, N = 16384, r = 8, p = 1: PBKDF2's first 32 bytes are those of its 64-byte output.
  const kat = await deriveBackupKey('pleaseletmein', new TextEncoder().encode('SodiumChloride'), FAST)
  t.equal(Buffer.from(kat).toString('hex'), '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2')
  for (const passphrase of ['correct horse battery staple', 'Ünïcödé pässphrase ✓', 'e\u0301 decomposed']) {
    const salt = Uint8Array.from(randomBytes(32))
    const ours = await deriveBackupKey(passphrase, salt, { log2N: 14, r: 4, p: 2 })
    const node = scryptSync(Buffer.from(passphrase.normalize('NFC'), 'utf8'), salt, 32, { N: 2 ** 14, r: 4, p: 2 })
    t.equal(Buffer.from(ours).toString('hex'), node.toString('hex'), passphrase)
  }
})

t.test('parameters above the cap are refused before any KDF runs', async (t) => {
  t.equal(scryptProblem({ log2N: 17, r: 8, p: 1 }), undefined, 'the default')
  t.equal(scryptProblem({ log2N: 18, r: 8, p: 1 }), undefined, '256 MiB, twice the work')
  for (const kdf of [
    { log2N: 19, r: 8, p: 1 },
    { log2N: 17, r: 8, p: 8 },
    { log2N: 12, r: 8, p: 1 },
    { log2N: 24, r: 1, p: 1 },
  ]) {
    t.type(scryptProblem(kdf), 'string', JSON.stringify(kdf))
    const started = Date.now()
    await t.rejects(deriveBackupKey('x', new Uint8Array(16), kdf), refused('bad_backup'))
    t.ok(Date.now() - started < 100, 'refused at once')
    t.throws(() => encodeBackupHeader({ ...header(), kdf, version: 1, keys: 0 }, 16), RangeError)
  }
  const file = sealBackup(key, header(), payload())
  const greedy = Uint8Array.from(file)
  greedy[13] = 24 // log2N
  t.throws(() => readBackupHeader(greedy), refused('bad_backup'), 'a file asking 2^24 is refused at parse')
})

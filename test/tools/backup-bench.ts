// The backup of a full key store (docs/backup.md, "Cost"): device A (E) filled to its 1 024 key slots with keys of
// every family (round robin, the ML-DSA-87 ones the largest), backed up; the file restored onto a fresh device B.
// Prints the file's size and the times. `node --import ./test/loader/register.mjs test/tools/backup-bench.ts`
// (after `npm run build`).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { downloadBackup, restoreWith, setBackupPassphrase, uploadBackup } from '../helpers/backup.js'
import { bootDevice } from '../helpers/device.js'
import { api, Tokens } from '../helpers/keys.js'
import { login, MASTER_PASS, owned } from '../helpers/owner.js'

const TYPES = ['AES256', 'SHA2-256', 'ED25519', 'SECP256R1', 'CURVE25519', 'MLKEM768', 'MLDSA65', 'MLDSA87']
const KEYS = 1024
const PARALLEL = 8

const dir = await mkdtemp(join(tmpdir(), 'hem-backup-bench-'))
const ends: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => void ends.push(fn) } as unknown as Test
try {
  const a = await owned(t, { dataDir: join(dir, 'a') })
  const gen = await new Tokens(a.base).get('keymgmt:gen')
  let next = 0
  const worker = async () => {
    for (let i = next++; i < KEYS; i = next++) {
      const type = TYPES[i % TYPES.length]!
      const made = await api(`${a.https}/api/keymgmt/create`, gen, { label: `${type} ${i}`, type })
      if (made.status !== 200) throw new Error(`key ${i}: ${made.status} ${made.text}`)
    }
  }
  let started = performance.now()
  await Promise.all(Array.from({ length: PARALLEL }, worker))
  console.log(`${KEYS} keys created in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const master = await login(a.base, 'system:backup', MASTER_PASS)
  started = performance.now()
  const set = await setBackupPassphrase(a.https, master)
  if (set.status !== 200) throw new Error(`passphrase: ${set.status} ${set.text}`)
  console.log(`backup passphrase set (scrypt N=2^17, r=8): ${(performance.now() - started).toFixed(0)} ms`)
  started = performance.now()
  const file = await downloadBackup(a.https, master)
  if (file.status !== 200) throw new Error(`backup: ${file.status} ${file.text}`)
  console.log(`backup of ${KEYS} keys: ${file.bytes.length} bytes in ${(performance.now() - started).toFixed(0)} ms`)

  const b = await bootDevice(t, { dataDir: join(dir, 'b'), variant: 'E' })
  started = performance.now()
  const staged = await uploadBackup(b.httpsUrl!, file.bytes)
  if (staged.status !== 200) throw new Error(`upload: ${staged.status} ${staged.text}`)
  console.log(`upload: ${(performance.now() - started).toFixed(0)} ms`)
  started = performance.now()
  const restored = await restoreWith(b.httpsUrl!)
  if (restored.status !== 200) throw new Error(`restore: ${restored.status} ${restored.text}`)
  console.log(`restore of ${restored.json.keys} keys: ${(performance.now() - started).toFixed(0)} ms (scrypt included)`)
} finally {
  for (const end of ends.reverse()) await end()
  await rm(dir, { recursive: true, force: true })
}

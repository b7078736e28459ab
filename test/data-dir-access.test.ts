// The owners and modes the supervisor gives a data dir before it starts each service as its own
// user (hal/sim/data-dir-access.ts): what it does not know stays its own, a symbolic link is never
// followed, and a data dir it cannot prepare fails the start rather than run half prepared.
import { execFileSync } from 'node:child_process'
import { lstat, mkdir, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { prepareDataDirAccess, type DataDirAccounts } from '../hal/sim/data-dir-access.js'

const account = (id: number) => ({ uid: id, gid: id })
/** Ids no account of this machine needs to have: chown takes any number. */
const accounts: DataDirAccounts = {
  core: 64000,
  journal: account(64001),
  identity: account(64002),
  keySlots: account(64003),
  disks: account(64004),
  firmware: account(64005),
  faults: account(64006),
  front: account(64007),
}

const owner = async (path: string) => {
  const s = await lstat(path)
  return { uid: s.uid, gid: s.gid, mode: s.mode & 0o7777 }
}

const skip = process.getuid?.() !== 0 && 'giving files to other users takes root'

t.test('what the supervisor does not know stays its own; a symbolic link is left alone', { skip }, async (t) => {
  const top = t.testdir()
  const dataDir = join(top, 'data')
  await mkdir(join(dataDir, 'enclave'), { recursive: true })
  await mkdir(join(dataDir, 'journal'))
  await writeFile(join(dataDir, 'enclave', 'credentials.json'), '{}', { mode: 0o644 })
  // What a write cut short leaves beside the file it was to replace.
  await writeFile(join(dataDir, 'enclave', 'credentials.json.tmp'), '{}', { mode: 0o644 })
  const outside = join(top, 'outside')
  await writeFile(outside, 'not the journal', { mode: 0o644 })
  await symlink(outside, join(dataDir, 'journal', 'link'))

  await prepareDataDirAccess(dataDir, accounts, 'E')
  t.same(await owner(join(dataDir, 'enclave', 'credentials.json')), { uid: 64002, gid: 64000, mode: 0o640 })
  t.same(await owner(join(dataDir, 'enclave', 'credentials.json.tmp')), { uid: 0, gid: 0, mode: 0o600 })
  t.same(await owner(outside), { uid: 0, gid: 0, mode: 0o644 }, 'the link was not followed')
  t.ok((await lstat(join(dataDir, 'journal', 'link'))).isSymbolicLink(), 'and is still a link')
})

t.test('a data dir of another shape, or a file that may not be changed, fails the preparation', { skip }, async (t) => {
  const top = t.testdir()
  const enclaveFile = join(top, 'enclave-file')
  await mkdir(enclaveFile)
  await writeFile(join(enclaveFile, 'enclave'), 'a file where the enclave directory belongs')
  await t.rejects(prepareDataDirAccess(enclaveFile, accounts, 'E'), { code: 'ENOTDIR' }, 'an enclave that is a file')

  const bootFile = join(top, 'boot-file')
  await mkdir(bootFile)
  await writeFile(join(bootFile, 'boot'), 'a file where the boot slots belong')
  await t.rejects(prepareDataDirAccess(bootFile, accounts, 'E'), { code: 'ENOTDIR' }, 'boot slots under a file')

  const immutable = join(top, 'immutable')
  const segment = join(immutable, 'journal', '000001.log')
  await mkdir(join(immutable, 'journal'), { recursive: true })
  await writeFile(segment, '')
  try {
    execFileSync('chattr', ['+i', segment], { stdio: 'ignore' })
  } catch {
    return t.comment('no immutable files on this file system: the last case is left out')
  }
  // Not a teardown: tap removes the test's folder before those.
  try {
    await t.rejects(prepareDataDirAccess(immutable, accounts, 'E'), { code: 'EPERM' }, 'an immutable journal segment')
    t.equal((await stat(segment)).uid, 0, 'left as it was')
  } finally {
    execFileSync('chattr', ['-i', segment])
  }
})

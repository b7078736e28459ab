// Who may read and write what in the sim's data dir when each service runs as its own Unix user:
// the owner of a file is the one process that writes it, its group the processes that read it.
import { chmod, chown, lstat, mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { errorCode } from './error-code.js'

/** A Unix user and its own group. */
export interface HalAccount {
  uid: number
  gid: number
}

/**
 * The processes of a device that own a part of its data dir. `core` is the group of every one
 * of them but `front`: they open the enclave's shared keys, the journal and the boot slots.
 */
export interface DataDirAccounts {
  core: number
  /** Writes `journal/` and the enclave's journal anchor. */
  journal: HalAccount
  /** Writes the enclave's login credentials, provisioning record and TLS material. */
  identity: HalAccount
  /** Holds the key repository `keys/` and its sealing key, readable by nobody else. */
  keySlots: HalAccount
  /** Holds `disks/` and the disk-sealing key; its group (the one that formats the disks too) reads and writes them. */
  disks: HalAccount
  /** Writes the boot slots, `upgrade/` and `webroot/`. */
  firmware: HalAccount
  /** Writes the injected faults of `sim/`, which every process reads. */
  faults: HalAccount
  /** The network-facing process: reads `webroot/` and `device.json`, nothing of the enclave. */
  front: HalAccount
}

const SETGID = 0o2000
const STICKY = 0o1000

/** Who owns a path: user, group and the modes of directories and files under it. */
interface Rule {
  uid: number
  gid: number
  dir: number
  file: number
  /** Apply to everything below too. */
  deep: boolean
}

/**
 * Gives every part of the data dir its owner and mode (run by the supervisor, as root, before it
 * starts a service process): what a service wrote since, it owns by itself already, mode 0600,
 * so this also makes it readable again by those that need it. Directories a service writes into
 * are created here when missing. Symbolic links are left alone.
 */
export async function prepareDataDirAccess(dataDir: string, a: DataDirAccounts, variant: 'P' | 'E'): Promise<void> {
  const root = process.getuid?.() ?? 0
  const rootGid = process.getgid?.() ?? 0
  const own = (who: HalAccount, dir: number, file: number, deep = true): Rule => ({ ...who, dir, file, deep })
  const shared = (uid: number, deep = true): Rule => ({ uid, gid: a.core, dir: 0o750 | SETGID, file: 0o640, deep })
  // The data dir and run/ are traversed by everyone, listed by nobody but the supervisor.
  await apply(dataDir, { uid: root, gid: rootGid, dir: 0o711, file: 0o600, deep: false })
  await apply(join(dataDir, 'device.json'), { uid: root, gid: rootGid, dir: 0o711, file: 0o644, deep: false })
  await apply(join(dataDir, 'run'), { uid: root, gid: rootGid, dir: 0o711, file: 0o600, deep: false })
  // Several services create files here: setgid keeps the group, sticky keeps each file its writer's.
  const enclave = join(dataDir, 'enclave')
  await apply(enclave, { uid: root, gid: a.core, dir: 0o770 | SETGID | STICKY, file: 0o640, deep: false })
  const enclaveFiles: Record<string, Rule> = {
    'log-signing.key.pem': shared(root),
    'identity.key.pem': shared(root),
    'attestation.key.pem': shared(root),
    'attestation.csr.der': shared(root),
    'tls.key.pem': shared(root),
    'tls.crt.pem': shared(root),
    'credentials.json': shared(a.identity.uid),
    'provisioning.json': shared(a.identity.uid),
    'tls-staged': shared(a.identity.uid),
    'tls-imported': shared(a.identity.uid),
    'journal-anchor.json': shared(a.journal.uid),
    'sealing.key': own(a.keySlots, 0o700, 0o600),
    'backup-sealing.key': own(a.keySlots, 0o700, 0o600),
    'disk-sealing.key': own(a.disks, 0o750, 0o640),
  }
  for (const name of await entries(enclave)) {
    // Anything else (a temporary file of a write cut short) stays the supervisor's alone.
    const alone: Rule = { uid: root, gid: rootGid, dir: 0o700, file: 0o600, deep: true }
    await apply(join(enclave, name), enclaveFiles[name] ?? alone)
  }
  await apply(join(dataDir, 'journal'), shared(a.journal.uid), true)
  await apply(join(dataDir, 'keys'), own(a.keySlots, 0o700, 0o600), true)
  if (variant === 'P') await apply(join(dataDir, 'disks'), own(a.disks, 0o770 | SETGID, 0o660), true)
  await apply(join(dataDir, 'upgrade'), own(a.firmware, 0o700, 0o600), true)
  // Code is no secret, and every service (the gateway too) runs the slot it was booted from.
  const code: Rule = { ...a.firmware, dir: 0o755, file: 0o644, deep: true }
  await apply(join(dataDir, 'boot'), { ...code, deep: false })
  await apply(join(dataDir, 'boot', 'slots.json'), shared(a.firmware.uid, false))
  const slots = join(dataDir, 'boot', 'slots')
  await apply(slots, { ...code, deep: false })
  // A slot is a tree renamed into place whole: once its top has the rule, so has the rest.
  for (const name of await entries(slots)) {
    if (!(await holds(join(slots, name), code))) await apply(join(slots, name), code)
  }
  // The gateway serves what the upgrade installs, at once: group-readable by the front alone.
  const webroot: Rule = { ...a.firmware, gid: a.front.gid, dir: 0o750 | SETGID, file: 0o640, deep: true }
  if (variant === 'P') await apply(join(dataDir, 'webroot'), webroot, true)
  // Injected faults are no secret: the entropy fault is read by every process.
  await apply(join(dataDir, 'sim'), { ...a.faults, dir: 0o755, file: 0o644, deep: true })
}

async function apply(path: string, rule: Rule, create = false): Promise<void> {
  if (create) await mkdir(path, { recursive: true, mode: 0o700 })
  let stat
  try {
    stat = await lstat(path)
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return
    throw err
  }
  if (stat.isSymbolicLink()) return
  try {
    await chown(path, rule.uid, rule.gid)
    await chmod(path, stat.isDirectory() ? rule.dir : rule.file)
  } catch (err) {
    // Replaced or removed meanwhile by the service that owns it (a restart runs beside the others).
    if (errorCode(err) === 'ENOENT') return
    throw err
  }
  if (stat.isDirectory() && rule.deep) {
    for (const name of await entries(path)) await apply(join(path, name), rule)
  }
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return []
    throw err
  }
}

async function holds(path: string, rule: Rule): Promise<boolean> {
  const stat = await lstat(path).catch(() => undefined)
  return stat?.uid === rule.uid && stat.gid === rule.gid && (stat.mode & 0o7777) === rule.dir
}

import { accessSync, constants } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { DataDirAccounts } from '../hal/index.js'
import { deviceServices, type DeviceService } from './run-service.js'

/** The Unix user a `--split` service process runs as, with the supplementary groups it keeps. */
export interface ServiceAccount {
  uid: number
  gid: number
  groups: number[]
}

/** Whether the services of a `--split` device run as their own Unix users, and as which; else why not. */
export type UidSeparation =
  | { separate: true; accounts: ReadonlyMap<DeviceService, ServiceAccount>; dataDir: DataDirAccounts }
  | { separate: false; reason: string }

/** util-linux's setpriv: it changes the user, sets the parent-death signal and execs (the child keeps its pid). */
export const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
})

/** The group of every service but the gateway: it reads the enclave's shared keys, the journal and the boot slots. */
const CORE_GROUP = 'hemd-core'

/** The Unix user (and its own group) of a service: what deploy/install.sh creates. */
const serviceUser = (service: DeviceService) => `hemd-${service}`

/**
 * The users the services run as: `hemd-<service>` and the group `hemd-core` from the system's
 * user database, or, with `uidBase` (tests and development, no user database entry needed), uid
 * and gid `uidBase + i` for the i-th service of the start order and `uidBase + 8` for the core
 * group. Only root can change to them: otherwise, and without setpriv, every process stays
 * hemd's own user.
 */
export async function uidSeparation(uidBase?: number): Promise<UidSeparation> {
  if (process.getuid?.() !== 0) return { separate: false, reason: 'hemd does not run as root' }
  if (!SETPRIV) return { separate: false, reason: "util-linux's setpriv is missing" }
  let ids: Map<DeviceService, { uid: number; gid: number }>
  let core: number
  if (uidBase !== undefined) {
    ids = new Map(deviceServices.map((service, i) => [service, { uid: uidBase + i, gid: uidBase + i }]))
    core = uidBase + deviceServices.length
  } else {
    const users = await userDatabase('/etc/passwd')
    const groups = await userDatabase('/etc/group')
    const missing = deviceServices.map(serviceUser).filter((name) => !users.has(name))
    if (!groups.has(CORE_GROUP)) missing.push(`group ${CORE_GROUP}`)
    if (missing.length > 0)
      return { separate: false, reason: `no ${missing.join(', ')} (deploy/install.sh creates them)` }
    ids = new Map(
      deviceServices.map((service) => {
        const [uid, gid] = users.get(serviceUser(service))!
        return [service, { uid: uid!, gid: gid! }]
      }),
    )
    core = groups.get(CORE_GROUP)![0]!
  }
  const groups: Partial<Record<DeviceService, number[]>> = {
    // The gateway faces the network: it is in no group but its own.
    gateway: [],
    // Auth formats and erases the disks (personalisation, wipeout): it shares the storage's group.
    auth: [core, ids.get('storage')!.gid],
  }
  const account = (service: DeviceService): ServiceAccount => ({
    ...ids.get(service)!,
    groups: groups[service] ?? [core],
  })
  const accounts = new Map(deviceServices.map((service) => [service, account(service)]))
  const own = (service: DeviceService) => ids.get(service)!
  return {
    separate: true,
    accounts,
    dataDir: {
      core,
      journal: own('eventstore'),
      identity: own('auth'),
      keySlots: own('keystore'),
      disks: own('storage'),
      firmware: own('upgrade'),
      faults: own('system'),
      front: own('gateway'),
    },
  }
}

/** Name to the numeric fields after the password: uid and gid in /etc/passwd, the gid in /etc/group. */
async function userDatabase(path: string): Promise<Map<string, number[]>> {
  const text = await readFile(path, 'utf8').catch(() => '')
  const entries = new Map<string, number[]>()
  for (const line of text.split('\n')) {
    const [name, , ...fields] = line.split(':')
    const ids = fields
      .slice(0, 2)
      .filter((field) => /^\d+$/.test(field))
      .map(Number)
    if (name && ids.length > 0) entries.set(name, ids)
  }
  return entries
}

/**
 * The arguments of setpriv that run a service process: as its account when there is one, and
 * always with SIGTERM as its parent-death signal, so that it dies with its supervisor (even one
 * killed with SIGKILL) instead of running on as an orphan.
 */
export function setprivArgs(account: ServiceAccount | undefined): string[] {
  const user = account
    ? [
        `--reuid=${account.uid}`,
        `--regid=${account.gid}`,
        ...(account.groups.length > 0 ? [`--groups=${account.groups.join(',')}`] : ['--clear-groups']),
        '--inh-caps=-all',
      ]
    : []
  return [...user, '--pdeathsig', 'TERM', '--']
}

// The embedded disks over the API (seed §3 disk lock table, device contract §6), P and E.
import t from 'tap'
import { initialTransition, transition } from 'xstate'
import { LogResult, LogType } from '../protocol/journal.js'
import { diskMachine } from '../machines/disk.js'
import { routeTable } from '../gateway/index.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { MASTER_PASS, login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

type Op = 'unlock' | 'unlock/ro' | 'unlock/rw' | 'lock'
const EVENT: Record<Op, (rw: boolean) => 'UNLOCK_RO' | 'UNLOCK_RW' | 'LOCK'> = {
  unlock: (rw) => (rw ? 'UNLOCK_RW' : 'UNLOCK_RO'),
  'unlock/ro': () => 'UNLOCK_RO',
  'unlock/rw': () => 'UNLOCK_RW',
  lock: () => 'LOCK',
}
const SHOWN: Record<string, string> = { locked: '-', ro: 'ro', rw: 'rw' }

/** The machine's own answer: the state `event` leads to from `from`. */
function expected(from: string, event: 'UNLOCK_RO' | 'UNLOCK_RW' | 'LOCK'): string {
  let [snapshot] = initialTransition(diskMachine, { disk: 0 })
  ;[snapshot] = transition(diskMachine, snapshot, { type: 'FORMATTED' })
  if (from !== 'locked')
    [snapshot] = transition(diskMachine, snapshot, { type: from === 'rw' ? 'UNLOCK_RW' : 'UNLOCK_RO' })
  return String(transition(diskMachine, snapshot, { type: event })[0].value)
}

t.test('P: power-up modes, every transition of the table from every state, scopes, reboot', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const status = async () => (await api(`${o.base}/api/system/status`, undefined)).json.storage as [string, string]
  const modes = async () => (await status()).map((s) => s.split(':')[1])
  // The disks follow the end of personalisation's format a moment after status shows it.
  await until('Disk 0 up', async () => (await modes())[0] === 'ro')
  t.same(await modes(), ['ro', '-'], 'storage_mode 0x51: Disk 0 visible read-only at power-up, Disk 1 locked')
  const sectors = (await status()).map((s) => Number(s.split(':')[0]))
  t.ok(sectors.every((n) => n > 0))

  const tokens = new Map<string, string>()
  const token = async (scope: string) =>
    tokens.get(scope) ?? (tokens.set(scope, await login(o.base, scope)), tokens.get(scope)!)
  const call = async (op: Op, scope: string) => api(`${o.base}/api/storage/${op}`, await token(scope))
  const bring = async (disk: number, state: string) => {
    const answer =
      state === 'locked'
        ? await call('lock', `storage:disk${disk}`)
        : await call(state === 'rw' ? 'unlock/rw' : 'unlock/ro', `storage:disk${disk}:rw`)
    t.equal(answer.status, 200)
  }

  for (const disk of [0, 1]) {
    for (const from of ['locked', 'ro', 'rw']) {
      for (const op of ['unlock', 'unlock/ro', 'unlock/rw', 'lock'] as Op[]) {
        for (const rw of [false, true]) {
          await bring(disk, from)
          const scope = `storage:disk${disk}${rw ? ':rw' : ''}`
          const answer = await call(op, scope)
          if (op === 'unlock/rw' && !rw) {
            t.equal(answer.status, 403, `disk ${disk} ${from} ${op} with ${scope}: 403`)
            t.equal((await modes())[disk], SHOWN[from], 'and nothing changes')
            continue
          }
          t.equal(answer.status, 200, `disk ${disk} ${from} ${op} with ${scope}`)
          t.equal(answer.text, '', 'an empty body')
          t.equal(
            (await modes())[disk],
            SHOWN[expected(from, EVENT[op](rw))],
            `disk ${disk}: ${from} → ${op} (${scope})`,
          )
        }
      }
    }
  }

  const records = (await readJournal(o.device.dataDir)).records
  const transitions = records.filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'disk')
  t.ok(
    transitions.some((r) => r.decoded?.instance === '0') && transitions.some((r) => r.decoded?.instance === '1'),
    'transitions journaled per disk',
  )
  t.ok(transitions.filter((r) => r.subject === 'U').length >= 40, 'those a request made name who made it')
  t.ok(
    transitions.every((r) => r.subject === 'U' || r.subject === ''),
    "the rest are the device's own (format, power-up mode)",
  )
  const denied = records.filter(
    (r) => r.type === LogType.FAILED_SCOPE_CHECK && String(r.decoded?.scope).startsWith('storage:'),
  )
  t.ok(
    denied.length >= 6 && denied.every((r) => r.result === LogResult.FAILED && r.decoded?.source === 403),
    '/unlock/rw without :rw is journaled',
  )

  t.equal((await call('unlock', 'storage:disk2')).status, 406, 'no Disk 2')
  t.equal((await call('unlock', 'storage:disk01')).status, 406, 'a disk spelt otherwise names no disk')
  t.equal((await call('lock', 'storage')).status, 406, 'the bare kind names no disk')
  t.equal((await call('unlock', 'storage:disk0:rw:x')).status, 406, 'nor does a disk scope with more after it')
  t.equal((await api(`${o.base}/api/storage/unlock`, await token('system:config'))).status, 403, 'another scope')
  t.equal(
    (await api(`${o.base}/api/storage/unlock`, await login(o.base, 'storage:disk0', MASTER_PASS))).status,
    403,
    'the master',
  )
  t.equal((await api(`${o.base}/api/storage/unlock`, undefined)).status, 401)
  t.equal((await api(`${o.base}/api/storage/unlock/xx`, await token('storage:disk0'))).status, 404)

  await call('unlock/rw', 'storage:disk0:rw')
  await call('unlock', 'storage:disk1:rw')
  t.same(await modes(), ['rw', 'rw'])
  await o.device.restart()
  await until(
    'back after the reboot',
    async () => (await api(`${o.base}/api/system/status`, undefined).catch(() => undefined))?.status === 200,
  )
  t.same(await modes(), ['ro', '-'], 'after a reboot: Disk 0 as storage_mode says, Disk 1 locked')
})

t.test('P: storage_mode 0x53 brings Disk 0 up writable; 0xA0 keeps it locked, Disk 1 under AES-XTS', async (t) => {
  const shown = async (base: string) =>
    (await api(`${base}/api/system/status`, undefined)).json.storage.map((s: string) => s.split(':')[1])
  await t.test('0x53', async (t) => {
    const o = await owned(t, { variant: 'P', cfg: { storage_mode: 0x53 } })
    await until('Disk 0 up', async () => (await shown(o.base))[0] === 'rw')
    t.same(await shown(o.base), ['rw', '-'])
    const config = await login(o.base, 'system:config')
    const resized = await api(`${o.base}/api/system/config`, config, { storage_disk0size: 196608 })
    t.equal(resized.status, 200, 'a new Disk 0 size reformats both disks')
    await until('reformatted', async () => {
      const status = (await api(`${o.base}/api/system/status`, undefined)).json
      return status.format === 'done' && status.storage[0] === '196608:rw'
    })
    t.equal(
      (await api(`${o.base}/api/system/status`, undefined)).json.storage[1].endsWith(':-'),
      true,
      'Disk 1 locked again',
    )
  })
  await t.test('0xA0', async (t) => {
    const o = await owned(t, { variant: 'P', cfg: { storage_mode: 0xa0 } })
    await until(
      'formatted',
      async () => (await api(`${o.base}/api/storage/lock`, await login(o.base, 'storage:disk0'))).status === 200,
    )
    t.same(await shown(o.base), ['-', '-'])
    t.equal((await api(`${o.base}/api/storage/unlock`, await login(o.base, 'storage:disk1:rw'))).status, 200)
    t.same(await shown(o.base), ['-', 'rw'])
  })
})

t.test('E: no storage', async (t) => {
  const o = await owned(t, { variant: 'E' })
  t.notOk('storage' in (await api(`${o.base}/api/system/status`, undefined)).json)
  const token = await login(o.base, 'storage:disk0:rw')
  for (const op of ['unlock', 'unlock/ro', 'unlock/rw', 'lock'])
    t.equal((await api(`${o.base}/api/storage/${op}`, token)).status, 404, op)
  for (const route of routeTable.filter((r) => !r.variants.includes('E'))) {
    const path = route.path.replace(/:\w+/g, '0')
    t.equal(
      (await api(`${o.base}${path}`, token, route.method === 'POST' ? {} : undefined, route.method)).status,
      404,
      `E: ${route.method} ${path}`,
    )
  }
})

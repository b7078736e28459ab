// A --split service process never outlives its supervisor: the IPC channel's end tells it, whatever it
// was doing, and under setpriv the kernel's parent-death signal does too.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { developmentTrust, encodeTrustAnchors, openHal } from '../hal/index.js'
import { builtFirmware } from './helpers/device.js'
import { hemdBin } from './helpers/hemd-process.js'
import { startNats } from './helpers/nats.js'
import { until } from './helpers/until.js'

/** Whether the process is still there (a zombie that nobody reaps yet counts as gone). */
function alive(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
}

/** How many sockets the process holds: its IPC channel, then its bus connection. */
function sockets(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')
    } catch {
      return false
    }
  }).length
}

/**
 * A stand-in supervisor: forks one service process the way the supervisor does, but without
 * setpriv (the IPC channel is all the service has then), sends it its configuration and prints
 * its pid.
 */
const supervisorScript = `
  const { fork } = await import('node:child_process')
  const config = JSON.parse(process.argv[1])
  const child = fork(${JSON.stringify(hemdBin)}, ['--service', config.service], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  })
  child.send(config)
  process.stdout.write(child.pid + '\\n')
  setInterval(() => undefined, 1000)
`

t.test('a service process still starting exits when its supervisor is killed', async (t) => {
  const dataDir = t.testdir({ device: {}, nats: {} })
  const hal = await openHal({ variant: 'P', dataDir: join(dataDir, 'device'), firmware: await builtFirmware() })
  await hal.close()
  const nats = await startNats(join(dataDir, 'nats'))
  t.teardown(() => nats.stop())
  // The gateway waits for the read models of services that never come: it is still starting.
  const config = {
    service: 'gateway',
    variant: 'P',
    dataDir: join(dataDir, 'device'),
    natsUrl: nats.url,
    trust: encodeTrustAnchors(developmentTrust()),
    http: { host: '127.0.0.1', port: 0 },
    logLevel: 'silent',
  }
  const supervisor = spawn(process.execPath, ['--input-type=module', '-e', supervisorScript, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(supervisor.stdout!.setEncoding('utf8'), 'data')) as [string]
  const pid = Number(line.trim())
  t.teardown(() => {
    if (alive(pid)) process.kill(pid, 'SIGKILL')
  })
  await until('the service process is connected to the bus', () => sockets(pid) >= 2, 30_000)
  supervisor.kill('SIGKILL')
  await once(supervisor, 'exit')
  // Its grace to stop cleanly is 5 s; a generous margin beyond it.
  await until('the orphaned service process exits', () => !alive(pid), 30_000)
  t.pass('no orphan is left')
})

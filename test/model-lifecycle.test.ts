// Model-based tests of the lifecycle machine: the run of one boot. Every path generated
// from machines/lifecycle.ts walks one boot of its own device: powered on sound (READY) or with
// a sensor out of range (FAULT), shut down through the API (STOP). After each step the journal
// holds exactly the step's TRANSITION record and the device shows the state: whether it answers,
// its fls_state, the boot's STARTUP and SHUTDOWN records.
import t, { type Test } from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import type { Device } from '../runtime/types.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { FLS } from '../protocol/fail-state.js'
import { machineRegistry } from '../machines/registry.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { status } from './helpers/model-device.js'
import { checkCoverage, checkDrivers, modelPaths, type PathOptions } from './helpers/model-paths.js'
import { checkObservations, walkPaths, type ModelRun } from './helpers/model-walk.js'
import { login, owned } from './helpers/owner.js'

const { machine: lifecycleMachine, version: lifecycleVersion } = machineRegistry.lifecycle

interface Boot {
  t: Test
  dataDir: string
  /** The boot under way, if the device is on. */
  device?: Device
}

const base = (d: Boot) => d.device!.httpUrl!

/** Powers the device on; what its start-up checks find decides READY or FAULT. */
async function powerOn(d: Boot): Promise<void> {
  d.device = await bootDevice(d.t, { variant: 'E', dataDir: d.dataDir })
}

/** The last record of a type: this boot's, or the last boot's. */
async function last(d: Boot, type: number) {
  return (await readJournal(d.dataDir)).records.filter((r) => r.type === type).at(-1)
}

async function off(t: Test, d: Boot): Promise<void> {
  await t.rejects(call(`http://127.0.0.1:${new URL(base(d)).port}/api/system/status`), 'the device does not answer')
}

const run: ModelRun<Boot> = {
  spec: { machine: lifecycleMachine, version: lifecycleVersion },
  /**
   * A personalised device (STOP is a shutdown its owner asks for), switched off: the path's boot is
   * the next one. A path that boots into a fault has the sensor read 95 °C (`hemd sim`) first.
   */
  async boot(t, path) {
    const o = await owned(t, { variant: 'E' })
    if (path.steps[0]?.event === 'FAULT') {
      const hot = await sendSimCommand(o.device.dataDir, { action: 'temperature', celsius: 95 })
      if (hot.status !== 200) throw new Error(`sim temperature: ${hot.status}`)
    }
    await o.device.stop()
    return { t, dataDir: o.device.dataDir, device: o.device }
  },
  drivers: {
    READY: powerOn,
    FAULT: powerOn,
    STOP: async (d) => {
      const shutdown = await api(`${base(d)}/api/system/shutdown`, await login(base(d), 'system:shutdown'))
      if (shutdown.status !== 200) throw new Error(`shutdown: ${shutdown.status} ${shutdown.text}`)
      await d.device!.stopped
    },
  },
  observations: {
    booting: (t, d) => off(t, d),
    running: async (t, d) => {
      t.equal((await status(base(d))).fls_state, 0, 'status.fls_state 0')
      t.match(await last(d, LogType.STARTUP), { result: LogResult.OK, decoded: { fls: 0 } }, 'STARTUP OK')
    },
    failed: async (t, d) => {
      t.equal((await status(base(d))).fls_state, FLS.TEMPERATURE, 'status.fls_state: the temperature bit')
      t.match(
        await last(d, LogType.STARTUP),
        { result: LogResult.ERROR, decoded: { fls: FLS.TEMPERATURE } },
        'STARTUP ERROR with the bits found',
      )
    },
    stopped: async (t, d) => {
      await off(t, d)
      const { records } = await readJournal(d.dataDir)
      t.match(
        records.filter((r) => r.type !== LogType.TRANSITION && r.type < 0x80).at(-1),
        { type: LogType.SHUTDOWN, subject: 'U' },
        'SHUTDOWN, by the owner, ends the boot',
      )
    },
  },
}

const drivable = Object.keys(run.drivers)
// The system actor decides READY or FAULT once, when a boot's start-up checks end (a fault found
// later is the health machine's), and journals STOP as the boot's services stop, never before that
// decision: running → FAULT and booting → STOP are the model's only, and nothing drives them.
const options: PathOptions = {
  drivable,
  filter: (snapshot, event) =>
    !(snapshot.value === 'running' && event.type === 'FAULT') &&
    !(snapshot.value === 'booting' && event.type === 'STOP'),
}
const paths = modelPaths(lifecycleMachine, options)

t.test('every event has a driver and every state an observation', async (t) => {
  checkDrivers(t, lifecycleMachine, drivable, {})
  checkCoverage(t, lifecycleMachine, paths, options)
  checkObservations(t, run)
})

t.test(`${paths.length} paths, each on its own device`, async (t) => walkPaths(t, run, paths, 2))

// Model-based tests of the health machine driven by the DIAG routes alone, as the certification
// scripts drive it (crypto-contract §6): every order of the three faults they inject, each path
// on its own DIAG device, with the observations of model-health.test.ts after every step.
import t from 'tap'
import { machineRegistry } from '../machines/registry.js'
import { FLS } from '../protocol/fail-state.js'
import { diagOk, selfTest } from './helpers/diag.js'
import { api, createKey, Tokens } from './helpers/keys.js'
import { inFailState, inSecureState, type ObservedDevice } from './helpers/model-health.js'
import { checkDrivers, modelPaths } from './helpers/model-paths.js'
import { walkPaths, type ModelRun } from './helpers/model-walk.js'
import { owned } from './helpers/owner.js'

const { machine: healthMachine, version: healthVersion } = machineRegistry.health

interface DiagDevice extends ObservedDevice {
  /** Where the key's record sits in the key store image. */
  addr: number
  /** system:config, for the self-test that finds the damaged record. */
  config: string
}

const run: ModelRun<DiagDevice> = {
  spec: { machine: healthMachine, version: healthVersion },
  async boot(t) {
    const o = await owned(t, { boot: { diag: true } })
    const tokens = new Tokens(o.base)
    const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'model', type: 'AES256' })
    // Listed while the device is secure: key management answers 409 in the fail state.
    const list = await api(`${o.https}/api/keymgmt/list`, await tokens.get('keymgmt:list'))
    const addr = (list.json.list as { kid: string; _addr: number }[]).find((k) => k.kid === kid)?._addr
    if (addr === undefined) throw new Error(`no _addr for the key: ${list.status} ${list.text}`)
    return {
      base: o.base,
      https: o.https,
      dataDir: o.device.dataDir,
      kid,
      use: await tokens.get(`keymgmt:use:${kid}`),
      addr,
      config: await tokens.get('system:config'),
    }
  },
  drivers: {
    TEMPERATURE_OUT_OF_RANGE: async (d) => void (await diagOk(d.base, 'break_temp')),
    ENTROPY_FAILED: async (d) => void (await diagOk(d.base, 'break_trng')),
    // The record damaged on the media is found by the next self-test, which answers with the bit raised.
    INTEGRITY_FAILED: async (d) => {
      await diagOk(d.base, `corrupt_repo/${d.addr}`)
      const answer = await selfTest(d.base, d.config)
      if (answer.status !== 200 || (answer.json.fls_state & FLS.INTEGRITY) === 0)
        throw new Error(`the self-test did not find the damaged record: ${answer.status} ${answer.text}`)
    },
  },
  // locked and shut_down need a backend's check-in, which no DIAG route gives: no path here reaches them.
  observations: {
    secure: (t, d) => inSecureState(t, d),
    failed: (t, d, walk) => inFailState(t, d, walk.snapshot.context.fls),
  },
}

const drivable = Object.keys(run.drivers)
// By whole snapshot (the bits included), not by state name: every order of the three faults, so that
// each fault is injected on top of every combination of the others.
const paths = modelPaths(healthMachine, { drivable, maxSteps: 3 })

t.test('every event has a DIAG driver or the reason it has none', async (t) => {
  const elsewhere = 'no DIAG route injects it; model-health.test.ts drives it'
  checkDrivers(t, healthMachine, drivable, {
    // A DIAG fault holds until a reboot: after break_temp the temperature never comes back in range.
    TEMPERATURE_IN_RANGE: 'break_temp holds the sensor at 125 °C until a reboot',
    KAT_FAILED: elsewhere,
    STACK_OVERFLOW: elsewhere,
    ALLOCATION_FAILED: elsewhere,
    CHECKIN_LOCK: elsewhere,
    CHECKIN_SHUTDOWN: elsewhere,
  })
  t.same(new Set(paths.map((p) => p.end)), new Set(['failed']), 'every path ends in the fail state')
})

t.test(`${paths.length} paths, each on its own DIAG device`, async (t) => walkPaths(t, run, paths, 2))

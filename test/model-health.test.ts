// Model-based tests of the health machine: every path generated from machines/health.ts
// runs on its own personalised device; after each step the journal holds exactly the step's
// TRANSITION record and the device shows the model's fls bits (status, the fault's audit record,
// and the gate: with fls_state ≠ 0 a key's encrypt answers 409 device_fault).
import { createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import type { SimCommand } from '../actors/system/sim-control.js'
import { signCheckinReply, type CheckinAction } from '../protocol/checkin.js'
import { LogType } from '../protocol/journal.js'
import { nativeEngine, nobleEngine, type CryptoEngine } from '../hal/crypto/index.js'
import { FLS } from '../protocol/fail-state.js'
import { machineRegistry } from '../machines/registry.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { createKey, Tokens } from './helpers/keys.js'
import { encrypt, inFailState, inSecureState, type ObservedDevice } from './helpers/model-health.js'
import { checkCoverage, checkDrivers, modelPaths, type ModelPath, type PathOptions } from './helpers/model-paths.js'
import { checkObservations, walkPaths, type ModelRun } from './helpers/model-walk.js'
import { owned, type Owned } from './helpers/owner.js'

const { machine: healthMachine, version: healthVersion } = machineRegistry.health

const backend = createPrivateKey(readFileSync(new URL('../deploy/keys/backend-dev.pem', import.meta.url)))

type EngineFault = 'kat' | 'stack' | 'allocation'

/**
 * The device's crypto engines, made to fail on demand: neither HTTP nor `hemd sim` can break
 * the crypto itself, and a KAT failure, a stack overflow or an allocation failure is the device
 * finding exactly that. Both engines fail, so that the KATs at boot leave no sound one to fall back to.
 */
class FaultyEngines {
  fault: EngineFault | undefined
  readonly engines = { native: this.faulty(nativeEngine), noble: this.faulty(nobleEngine) }

  private faulty(engine: CryptoEngine): CryptoEngine {
    const overflow = (depth: number): number => overflow(depth + 1) + 1
    return {
      ...engine,
      aesGcmEncrypt: (...args) => {
        if (this.fault === 'kat') throw new Error('the AES unit answers garbage')
        if (this.fault === 'stack') overflow(0)
        // What V8 throws when an ArrayBuffer cannot be had.
        if (this.fault === 'allocation') throw new RangeError('Array buffer allocation failed')
        return engine.aesGcmEncrypt(...args)
      },
    }
  }
}

interface HealthDevice extends Owned, ObservedDevice {
  faults: FaultyEngines
  /** Check-in challenges asked for while the device could still draw randomness (a stuck source cannot). */
  checks: string[]
}

const CHECKINS: Record<string, CheckinAction> = { CHECKIN_LOCK: 'lock', CHECKIN_SHUTDOWN: 'shutdown' }

/** Only a boot's start-up tests find these (the KATs, the key repository's records): the path reboots into them. */
const AT_BOOT = ['KAT_FAILED', 'INTEGRITY_FAILED']
/** Only a request that reaches the crypto engine meets these, and a fail state stops every one before it does. */
const IN_THE_ENGINE = ['STACK_OVERFLOW', 'ALLOCATION_FAILED']

async function sim(d: HealthDevice, command: SimCommand): Promise<void> {
  const reply = await sendSimCommand(d.dataDir, command)
  if (reply.status !== 200) throw new Error(`sim ${command.action}: ${reply.status} ${JSON.stringify(reply.body)}`)
}

/** What a new boot takes: a token, and as many check-in challenges as the rest of the path answers. */
async function afterBoot(d: HealthDevice, path: ModelPath, from: number): Promise<void> {
  d.use = await new Tokens(d.base).get(`keymgmt:use:${d.kid}`)
  const answered = path.steps.slice(from).filter((s) => s.event in CHECKINS).length
  d.checks = []
  for (let i = 0; i < answered; i++) d.checks.push((await call(`${d.base}/api/system/checkin`)).json.check as string)
}

async function reboot(d: HealthDevice, path: ModelPath, index: number): Promise<void> {
  await d.device.restart()
  await afterBoot(d, path, index)
}

async function expectAnswer(what: string, answer: Promise<Answer>, status: number): Promise<Answer> {
  const got = await answer
  if (got.status !== status) throw new Error(`${what}: ${got.status} ${got.text}, not ${status}`)
  return got
}

const run: ModelRun<HealthDevice> = {
  spec: { machine: healthMachine, version: healthVersion },
  async boot(t, path) {
    const faults = new FaultyEngines()
    const o = await owned(t, { cfg: { trusted_backend: true }, boot: { cryptoEngines: faults.engines } })
    const kid = await createKey(o.https, await new Tokens(o.base).get('keymgmt:gen'), {
      label: 'model',
      type: 'AES256',
    })
    const d: HealthDevice = { ...o, dataDir: o.device.dataDir, faults, kid, use: '', checks: [] }
    await afterBoot(d, path, 0)
    return d
  },
  drivers: {
    TEMPERATURE_OUT_OF_RANGE: (d) => sim(d, { action: 'temperature', celsius: 95 }),
    TEMPERATURE_IN_RANGE: (d) => sim(d, { action: 'temperature', celsius: null }),
    // Repaired at once: the failure latches until a reboot, and the rest of the path wants a working source.
    ENTROPY_FAILED: async (d) => {
      await sim(d, { action: 'entropy', fault: 'stuck' })
      await sim(d, { action: 'entropy', fault: 'none' })
    },
    INTEGRITY_FAILED: async (d, walk) => {
      await sim(d, { action: 'corrupt-key' })
      await reboot(d, walk.path, walk.index)
    },
    KAT_FAILED: async (d, walk) => {
      d.faults.fault = 'kat'
      await reboot(d, walk.path, walk.index)
      d.faults.fault = undefined
    },
    STACK_OVERFLOW: (d) => engineFault(d, 'stack'),
    ALLOCATION_FAILED: (d) => engineFault(d, 'allocation'),
    CHECKIN_LOCK: (d) => checkIn(d, 'lock'),
    CHECKIN_SHUTDOWN: async (d) => {
      await checkIn(d, 'shutdown')
      await d.device.stopped
    },
  },
  observations: {
    secure: (t, d) => inSecureState(t, d),
    failed: (t, d, walk) => inFailState(t, d, walk.snapshot.context.fls),
    locked: (t, d, walk) => inFailState(t, d, walk.snapshot.context.fls),
    shut_down: async (t, d, walk) => {
      await t.rejects(call(`${d.base}/api/system/status`), 'the device no longer answers')
      const { records } = await readJournal(d.dataDir)
      t.match(
        records.filter((r) => r.type === LogType.NON_SECURE_STATE).at(-1)?.decoded,
        { fls: walk.snapshot.context.fls, raised: FLS.SHUTDOWN, source: 'checkin' },
        'the order is journaled with the bits',
      )
      t.equal(
        records.filter((r) => r.type !== LogType.TRANSITION && r.type < 0x80).at(-1)?.type,
        LogType.SHUTDOWN,
        'SHUTDOWN is the last event',
      )
    },
  },
}

async function engineFault(d: HealthDevice, fault: EngineFault): Promise<void> {
  d.faults.fault = fault
  try {
    await expectAnswer(`encrypt with a ${fault} fault`, encrypt(d), 500)
  } finally {
    d.faults.fault = undefined
  }
}

async function checkIn(d: HealthDevice, action: CheckinAction): Promise<void> {
  const check = d.checks.shift()
  if (!check) throw new Error('no check-in challenge left for this path')
  const checked = signCheckinReply(check, backend, { action })
  const answer = await expectAnswer(
    `check-in ${action}`,
    call(`${d.base}/api/system/checkin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ checked }),
    }),
    200,
  )
  if (answer.json.status !== (action === 'lock' ? 'LOCKED' : 'SHUTDOWN'))
    throw new Error(`check-in ${action}: ${answer.text}`)
}

const drivable = Object.keys(run.drivers)
// shut_down: the device stops right after it journals the order, so no fault can reach it there.
const options: PathOptions = {
  drivable,
  byStateName: true,
  maxSteps: 3,
  filter: (snapshot, event) => {
    if (snapshot.value === 'shut_down') return false
    // A reboot starts the machine in `secure` with no bits: only from there is a boot's finding the model's next step.
    if (AT_BOOT.includes(event.type)) return snapshot.value === 'secure' && snapshot.context.fls === 0
    if (IN_THE_ENGINE.includes(event.type)) return snapshot.context.fls === 0
    return true
  },
}
const paths = modelPaths(healthMachine, options)

t.test('every event has a driver and every state an observation', async (t) => {
  checkDrivers(t, healthMachine, drivable, {})
  checkCoverage(t, healthMachine, paths, options)
  checkObservations(t, run)
})

t.test(`${paths.length} paths, each on its own device`, async (t) => walkPaths(t, run, paths, 3))

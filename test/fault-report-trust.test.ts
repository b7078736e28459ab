// A fault another service reports raises its bit, and the record says what the device knows, not what
// the reporter claims: its source is the subject it published on (which the bus lets only that
// service use), and its detail cannot stand in for the bits or the source.
import t from 'tap'
import type { Logger } from 'pino'
import { FaultFollower } from '../actors/system/fault-follower.js'
import { HealthMonitor, type FaultReport } from '../actors/system/health-monitor.js'
import { openHal } from '../hal/index.js'
import { encode } from '../protocol/codec.js'
import { FLS } from '../protocol/fail-state.js'
import { LogType } from '../protocol/journal.js'
import { Subjects } from '../protocol/subjects.js'
import { builtFirmware } from './helpers/device.js'
import { identity, scriptedIdentity } from './helpers/scripted-identity.js'
import { silentLogger } from './helpers/logger.js'
import { until } from './helpers/until.js'
import { recordingJournal } from './helpers/journal.js'

const forged = { fls: 0, raised: 0, cleared: FLS.STACK, source: 'sensor' }

t.test("a fault's source is the subject it came on, not the service its payload names", async (t) => {
  const { hal, connect } = await scriptedIdentity(t, 'E', identity(true))
  const reports: FaultReport[] = []
  const nc = await connect('system')
  const follower = new FaultFollower({
    nc,
    devid: hal.devid,
    logger: silentLogger,
    report: async (report) => void reports.push(report),
  })
  t.teardown(() => follower.close())
  follower.start()
  await nc.flush()

  const storage = await connect('storage')
  const event = { service: 'keystore', fault: 'STACK_OVERFLOW', detail: forged }
  storage.publish(new Subjects(hal.devid).fault('storage'), encode(event))
  await storage.flush()
  await until('the fault followed', () => reports.length > 0)
  t.same(reports, [{ fault: 'STACK_OVERFLOW', source: 'storage', detail: forged }])
})

t.test("a reporter's detail is kept apart from the bits and the source, in the journal and the log", async (t) => {
  const hal = await openHal({ variant: 'E', dataDir: t.testdir(), firmware: await builtFirmware() })
  t.teardown(() => hal.close())
  const { journal, journaled } = recordingJournal()
  const logged: Record<string, unknown>[] = []
  const logger = { error: (fields: Record<string, unknown>) => void logged.push(fields) } as unknown as Logger
  const health = new HealthMonitor({
    hal,
    journal,
    logger,
    temperatureRange: { min: 0, max: 50 },
    onChange: () => undefined,
  })
  await health.report({ fault: 'STACK_OVERFLOW', source: 'storage', detail: forged })
  t.equal(health.fls, FLS.STACK)
  t.same(journaled.filter((e) => e.type === LogType.NON_SECURE_STATE).at(-1)?.data, {
    fls: FLS.STACK,
    raised: FLS.STACK,
    source: 'storage',
    detail: forged,
  })
  t.same(logged, [{ fault: 'STACK_OVERFLOW', source: 'storage', detail: forged }])
})

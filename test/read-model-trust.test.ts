// Whose state a state event is comes from the subject it arrived on, which the bus authenticates
// (each service may publish on its own subjects only), never from the `service` its payload names:
// otherwise a compromised service could hand every follower an identity with a token key of its own.
import type { NatsConnection } from '@nats-io/transport-node'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { startOwnBus } from '../bus/bus-setup.js'
import { connectBus } from '../bus/connection.js'
import { followReadModels } from '../bus/follow-read-models.js'
import { ServiceHost } from '../bus/service-host.js'
import { encode } from '../protocol/codec.js'
import { Subjects } from '../protocol/subjects.js'
import { silentLogger } from './helpers/logger.js'
import { until } from './helpers/until.js'

const devid = '00112233aabbccdd'
const subjects = new Subjects(devid)
const GENUINE = { token_key: 'genuine', inited: true }
const FORGED = { token_key: 'forged', inited: false }

async function ownBus(t: Test): Promise<(service: string) => Promise<NatsConnection>> {
  const bus = await startOwnBus({ devid, runDir: t.testdir() })
  t.teardown(() => bus.server.stop())
  return async (service) => {
    const nc = await connectBus({ servers: bus.url, service, credentials: bus.credentials.get(service)! })
    t.teardown(() => nc.close())
    return nc
  }
}

/** `service` on the bus, its read model `state` published. */
async function publishing(
  t: Test,
  connect: (service: string) => Promise<NatsConnection>,
  service: string,
  state: Record<string, unknown>,
) {
  const nc = await connect(service)
  const host = new ServiceHost<Record<string, unknown>>(nc, devid, service, {}, silentLogger)
  host.start()
  t.teardown(() => host.stop())
  host.publishState(state)
  return { nc, host }
}

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: { level: number; msg: string; raw: string }[] = []
  const logger = pino({ level: 'warn' }, { write: (raw: string) => void lines.push({ ...JSON.parse(raw), raw }) })
  return { logger, lines }
}

t.test("a state event counts for the subject's service, whatever its payload names", async (t) => {
  const connect = await ownBus(t)
  const { nc: authNc, host: auth } = await publishing(t, connect, 'auth', GENUINE)
  // A compromised system service: it may publish only on its own subjects, but anything there.
  const { nc: systemNc, host: system } = await publishing(t, connect, 'system', { fls_state: 0, mark: 0 })
  await authNc.flush()
  await systemNc.flush()

  const { logger, lines } = capturingLogger()
  const follower = followReadModels(await connect('keystore'), devid, 'keystore', ['auth', 'system'], logger)
  t.teardown(() => follower.close())
  await follower.whenReady()
  t.same(follower.readModel('auth'), GENUINE)

  // One publisher's messages reach a subscriber in order: once the mark is seen, the forgery was judged.
  systemNc.publish(subjects.state('system'), encode({ service: 'auth', rev: 99, boot: 'forger', state: FORGED }))
  system.publishState({ fls_state: 0, mark: 1 })
  await until('the mark after the forgery', () => follower.readModel<{ mark: number }>('system')?.mark === 1)
  t.same(follower.readModel('auth'), GENUINE, "the identity on the system's subject is not auth's")

  authNc.publish(
    subjects.state('auth'),
    encode({ service: 'system', rev: 99, boot: 'forger', state: { fls_state: 4 } }),
  )
  auth.publishState({ ...GENUINE, mark: 2 })
  await until('the mark after the forgery', () => follower.readModel<{ mark: number }>('auth')?.mark === 2)
  t.same(follower.readModel('system'), { fls_state: 0, mark: 1 }, "a state naming the system on auth's subject is not")

  const dropped = lines.filter((line) => /naming another service/.test(line.msg))
  t.equal(dropped.length, 2, 'each dropped event is logged')
  t.ok(
    dropped.every((line) => line.level === 40 && !/forged|forger|fls_state/.test(line.raw)),
    'at warn, without its payload',
  )
})

t.test('a state read again counts only when the service asked for it answers as itself', async (t) => {
  const connect = await ownBus(t)
  const { nc: systemNc } = await publishing(t, connect, 'system', { fls_state: 0 })
  // Auth's state, asked for by every follower, answered first as another service's (and late, so that the
  // system's own answer is in before it), then as its own.
  const authNc = await connect('auth')
  let asked = 0
  authNc.subscribe(subjects.command('auth', 'state'), {
    callback: (_err, msg) => {
      asked += 1
      if (asked === 1) {
        const forged = encode({ service: 'system', rev: 99, boot: 'forger', state: { fls_state: 4 } })
        setTimeout(() => msg.respond(forged), 100)
      } else msg.respond(encode({ service: 'auth', rev: 1, boot: 'genuine', state: GENUINE }))
    },
  })
  await authNc.flush()
  await systemNc.flush()

  const follower = followReadModels(await connect('keystore'), devid, 'keystore', ['auth', 'system'], silentLogger)
  t.teardown(() => follower.close())
  await follower.whenReady()
  t.ok(asked >= 2, 'auth was asked again after the answer naming another service')
  t.same(follower.readModel('auth'), GENUINE)
  t.same(follower.readModel('system'), { fls_state: 0 }, "the system's state is the system's own")
})

import type { NatsConnection } from '@nats-io/transport-node'
import { generateKeyPairSync, sign } from 'node:crypto'
import type { Test } from 'tap'
import type { IdentityState } from '../../protocol/identity-state.js'
import type { SystemState } from '../../protocol/system-state.js'
import { connectBus } from '../../bus/connection.js'
import { ServiceHost } from '../../bus/service-host.js'
import { followReadModels } from '../../bus/follow-read-models.js'
import type { ReadModelBus } from '../../bus/read-model-bus.js'
import { BEARER_HEADER } from '../../protocol/bearer-token.js'
import { BusUnavailableError } from '../../bus/errors.js'
import type { JournalPort } from '../../actors/host/journal-port.js'
import { startOwnBus } from '../../bus/bus-setup.js'
import type { JournalEntry } from '../../protocol/journal.js'
import { openHal } from '../../hal/index.js'
import type { Clock, Hal } from '../../hal/types.js'
import type { Variant } from '../../protocol/device.js'
import { builtFirmware } from './device.js'
import { recordingJournal } from './journal.js'
import { silentLogger } from './logger.js'

/** The scripted auth actor's token key: `scriptedBearer` signs with it, `identity` publishes its public half. */
const tokenKey = generateKeyPairSync('ed25519')
export const SCRIPTED_TOKEN_KEY = tokenKey.publicKey.export({ format: 'jwk' }).x!

export function identity(inited: boolean, extra: Partial<IdentityState> = {}): IdentityState {
  return {
    token_key: SCRIPTED_TOKEN_KEY,
    inited,
    ctx: 0,
    trusted_ts: true,
    allow_keysearch: false,
    transport: { hostname: '', origin: '*', hsts: false, dosprot: 0 },
    intact: true,
    ...extra,
  }
}

/** A bearer token as the scripted auth actor would mint it: signed with its token key, valid for an hour. */
export function scriptedBearer(sub: string, scope: string, exp = Math.floor(Date.now() / 1000) + 3600): string {
  const claims = { scope, sub, iat: exp - 3600, exp, jti: 'scripted' }
  const signingInput = `${BEARER_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${signingInput}.${sign(null, Buffer.from(signingInput), tokenKey.privateKey).toString('base64url')}`
}

export interface ScriptedIdentity {
  hal: Hal
  /** A bus connection as `service`, with that service's own credentials. */
  connect(service: string): Promise<NatsConnection>
  /** Stands in for the auth actor: publish the identity the actor under test follows. */
  auth: ServiceHost<IdentityState>
  /** Stands in for the system actor: the fail state the actor under test follows (0 at first). */
  system: ServiceHost<Pick<SystemState, 'status'>>
  journal: JournalPort
  journaled: JournalEntry[]
  /** The gateway's view of `services` (their read models, commands to them), closed when the test ends. */
  gatewayView(services: string[]): Promise<ReadModelBus>
}

/**
 * A real HAL and bus with the auth actor replaced by a script, for actors that follow the
 * identity: the test publishes whatever identity it wants and reads what the actor journaled.
 * The HAL runs on `clock` when given (the host's otherwise).
 */
export async function scriptedIdentity(
  t: Test,
  variant: Variant,
  initial: IdentityState,
  { clock }: { clock?: Clock } = {},
): Promise<ScriptedIdentity> {
  const dir = t.testdir({ data: {}, run: {} })
  const firmware = await builtFirmware()
  const hal = await openHal({ variant, dataDir: `${dir}/data`, firmware, ...(clock ? { clock } : {}) })
  t.teardown(() => hal.close())
  const bus = await startOwnBus({ devid: hal.devid, runDir: `${dir}/run` })
  t.teardown(() => bus.server.stop())
  const connect = async (service: string) => {
    const nc = await connectBus({ servers: bus.url, service, credentials: bus.credentials.get(service)! })
    t.teardown(() => nc.close())
    return nc
  }
  const auth = new ServiceHost<IdentityState>(await connect('auth'), hal.devid, 'auth', {}, silentLogger)
  auth.start()
  auth.publishState(initial)
  const system = new ServiceHost<Pick<SystemState, 'status'>>(
    await connect('system'),
    hal.devid,
    'system',
    {},
    silentLogger,
  )
  system.start()
  system.publishState({ status: { fls_state: 0, temp: 36 } })
  const { journal, journaled } = recordingJournal()
  const gatewayView = async (services: string[]) => {
    const bus = followReadModels(await connect('gateway'), hal.devid, 'gateway', services, silentLogger)
    t.teardown(() => bus.close())
    return bus
  }
  return { hal, connect, auth, system, journal, journaled, gatewayView }
}

/** The scripted journal, except that it refuses, as a journal out of reach does, every append `refuses` picks. */
export function refusingJournal(
  { journal }: Pick<ScriptedIdentity, 'journal'>,
  refuses: (entries: JournalEntry[]) => boolean,
): JournalPort {
  return {
    append: async (entries) => {
      if (refuses(entries)) throw new BusUnavailableError('the journal is out of reach')
      return journal.append(entries)
    },
    status: () => journal.status(),
    head: () => journal.head(),
  }
}

// The family's two sequences (contract §0, A and B) as an owner runs them, one named step at a time, so that a fault
// test acts between two steps: a real device through the client library (HemClient), the client's broker calls
// through BrokerClient, and a phone (TestApp, on the protocol core) answering at the cloud's one name.
import { setTimeout as sleep } from 'node:timers/promises'
import { BrokerRefusedError, type BrokerClient, type HemClient } from '../../client/index.js'
import { call, type Answer } from './http.js'
import { dataPath } from './notify-flows.js'
import type { TestApp } from './notify-parties.js'

export interface FlowStep {
  name: string
  /** Whether the step is a request to the cloud (the others go to the device). */
  broker: boolean
  run(): Promise<void>
}

export interface OwnerParties {
  device: HemClient
  broker: BrokerClient
  /** The base URL the phone reaches the cloud by (its links' host is the cloud's public URL). */
  cloudUrl: string
  phone: TestApp
}

/** What a flow leaves behind: the pairing, and the token of the approval; their broker ids on the way. */
export interface FlowOutcome {
  eid: string
  rid: string
  pid: string
  eventid: string
  token: string
}

const nowS = () => Math.floor(Date.now() / 1000)

/** BrokerClient's fetch on a new connection per request (no keep-alive): a round-robin front then turns each time. */
export const fetchOnNewConnection = (async (input: string | URL | Request, init?: RequestInit) => {
  const answer = await call(String(input), {
    method: init?.method ?? 'GET',
    headers: (init?.headers ?? {}) as Record<string, string>,
    ...(typeof init?.body === 'string' ? { body: init.body } : {}),
    ...(init?.signal ? { signal: init.signal } : {}),
  })
  return new Response(answer.text, { status: answer.status })
}) as typeof fetch

async function phoneCall(p: OwnerParties, method: string, path: string, body?: unknown): Promise<any> {
  const answer: Answer = await call(`${p.cloudUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  })
  if (answer.status === 503) throw new Unavailable(`phone ${method} ${path}: 503 ${answer.text}`)
  if (answer.status !== 200) throw new Error(`phone ${method} ${path}: ${answer.status} ${answer.text}`)
  return answer.json
}

/** The cloud's 503 `unavailable` (its state did not answer in time, Retry-After: 1), to the phone. */
class Unavailable extends Error {}

/** A 503 from the cloud, to the phone or to the client library: the request is to be made again after a second. */
function unavailable(err: unknown): boolean {
  return err instanceof Unavailable || (err instanceof BrokerRefusedError && err.status === 503)
}

/** Sequence A, pairing the phone with the device: eight steps, the device's and the cloud's in the contract's order. */
export function pairingSteps(p: OwnerParties, out: Partial<FlowOutcome>): FlowStep[] {
  let epk = ''
  let request = ''
  let link = ''
  let reply = ''
  let validated = { kid: '', code: '' }
  return [
    {
      name: 'POST /notify/session',
      broker: true,
      run: async () => {
        out.eid = (await p.device.pairingIdentity()).eid
        epk = (await p.broker.deviceSession(out.eid)).epk
      },
    },
    { name: 'device ext/init', broker: false, run: async () => void ({ request } = await p.device.extInit(epk)) },
    {
      name: 'POST /notify/register/init',
      broker: true,
      run: async () => void ({ rid: out.rid, link } = await p.broker.registerInit({ epk, eid: out.eid!, request })),
    },
    {
      name: 'phone GET link',
      broker: true,
      run: async () => {
        const challenge = await phoneCall(p, 'GET', new URL(link).pathname)
        if (challenge.request !== request) throw new Error('the link shows another request')
      },
    },
    {
      name: 'phone POST link',
      broker: true,
      run: async () =>
        void ({ pid: out.pid } = await phoneCall(p, 'POST', new URL(link).pathname, p.phone.reply(request))),
    },
    {
      name: 'GET /notify/register/check',
      broker: true,
      run: async () => {
        const state = await p.broker.registerCheck(out.rid!)
        if (state.state !== 'replied') throw new Error(`register/check: ${state.state}`)
        reply = state.reply
      },
    },
    {
      name: 'device ext/validate',
      broker: false,
      run: async () => void (validated = await p.device.extValidate(out.pid!, reply)),
    },
    {
      name: 'POST /notify/register/finalise',
      broker: true,
      run: async () => void (await p.broker.registerFinalise(out.rid!, validated)),
    },
  ]
}

/** Sequence B, asking `scope` and approving it on the phone: eight steps, ending with the device's token. */
export function approvalSteps(p: OwnerParties, out: Partial<FlowOutcome>, scope: string): FlowStep[] {
  let epk = ''
  let authreq = ''
  let data: { jti: string; scope: string; epk: string } | undefined
  let authreply = ''
  return [
    { name: 'GET /notify/session', broker: true, run: async () => void ({ epk } = await p.broker.anonymousSession()) },
    {
      name: 'device ext/request',
      broker: false,
      run: async () => void ({ authreq } = await p.device.extRequest({ epk, scope })),
    },
    {
      name: 'POST /notify/event/new',
      broker: true,
      run: async () => void ({ eventid: out.eventid } = await p.broker.eventNew({ authreq, epk })),
    },
    {
      name: 'phone POST /notify/event/data/allbypid',
      broker: true,
      run: async () => {
        const inbox = await phoneCall(p, 'POST', '/notify/event/data/allbypid', { pid: [out.pid] })
        if (!inbox.eventid?.[out.eventid!]) throw new Error('the phone does not find the event')
      },
    },
    {
      name: 'phone GET /notify/event/data',
      broker: true,
      run: async () => void (data = await phoneCall(p, 'GET', dataPath(out.eventid!, out.pid!))),
    },
    {
      name: 'phone POST /notify/event/data',
      broker: true,
      run: async () => {
        const body = p.phone.authreply(data!, out.eid!, out.pid!, nowS())
        await phoneCall(p, 'POST', dataPath(out.eventid!, out.pid!), body)
      },
    },
    {
      name: 'GET /notify/event/check',
      broker: true,
      run: async () => {
        const state = await p.broker.eventCheck(out.eventid!)
        if (state.state !== 'allowed') throw new Error(`event/check: ${state.state}`)
        authreply = state.authreply
      },
    },
    {
      name: 'device ext/token',
      broker: false,
      run: async () => void ({ token: out.token } = await p.device.extToken(authreply)),
    },
  ]
}

/**
 * Runs `steps` in order; `between(i)` runs after step i (its name given) and before the next. A step the cloud
 * answers 503 (Retry-After: 1) is made again after a second, as the family's clients do, up to 5 times: the number
 * of such answers.
 */
export async function runSteps(
  steps: FlowStep[],
  between: (done: FlowStep, next: FlowStep | undefined) => Promise<void> = async () => {},
): Promise<number> {
  let unavailableAnswers = 0
  for (const [i, step] of steps.entries()) {
    for (let tries = 1; ; tries++) {
      try {
        await step.run()
        break
      } catch (err) {
        if (step.broker && unavailable(err) && tries < 5) {
          unavailableAnswers++
          await sleep(1000)
          continue
        }
        throw new Error(`step ${i + 1} (${step.name}) failed: ${(err as Error).message}`, { cause: err })
      }
    }
    await between(step, steps[i + 1])
  }
  return unavailableAnswers
}

/** The scope a device's bearer token carries. */
export function tokenScope(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).scope as string
}

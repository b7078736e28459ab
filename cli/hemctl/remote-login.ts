// `hemctl login --remote` (ext-auth-contract Sequence B): a token approved on a paired authenticator,
// with no passphrase at all. The device's challenge travels through the broker; the approval comes back
// the same way and the device exchanges it for a bearer token.
import { UsageError } from '../index.js'
import { printable, type BrokerClient } from '../../client/index.js'
import { connect, print, type ConnectionValues, type HemctlIo } from './context.js'
import { brokerFor, CLOUD_USAGE, cloudOptions, seconds, stopped, waitOnCloud, type CloudValues } from './cloud.js'
import { EXIT } from './failure.js'

export interface RemoteLoginValues extends ConnectionValues, CloudValues {
  scope: string
  exp?: string | undefined
  ctx?: string | undefined
  note?: string | undefined
  wait?: string | undefined
  json?: boolean | undefined
}

export const REMOTE_LOGIN_USAGE = `\
  --remote            a paired authenticator approves the token, no passphrase (needs --cloud)
${CLOUD_USAGE}  --exp SECONDS       --remote: the token lives at most this long, whatever the authenticator grants
  --ctx TEXT          --remote: a context for the token (1 to 64 characters)
  --note TEXT         --remote: a note the authenticator shows (1 to 128 characters)
  --wait SECONDS      --remote: give up after this long (default until the request expires)
`

export const remoteLoginOptions = {
  remote: { type: 'boolean', default: false },
  ...cloudOptions,
  exp: { type: 'string' },
  ctx: { type: 'string' },
  note: { type: 'string' },
  wait: { type: 'string' },
} as const

/** Options that mean something only with --remote. */
export const REMOTE_ONLY = ['cloud', 'cloud-ca', 'exp', 'ctx', 'note', 'wait'] as const

export async function remoteLogin(values: RemoteLoginValues, io: HemctlIo): Promise<number> {
  if (values.master) throw new UsageError('--remote asks an authenticator, not a passphrase: --master does not apply')
  const exp = values.exp === undefined ? undefined : seconds('--exp', values.exp)
  const wait = values.wait === undefined ? undefined : seconds('--wait', values.wait)
  const broker = await brokerFor(values, { required: true })
  const client = await connect(values, io)
  const { epk } = await broker.anonymousSession()
  const nowS = () => Math.floor(Date.now() / 1000)
  const requested = await client.extRequest({
    epk,
    scope: values.scope,
    ...(exp !== undefined ? { exp: nowS() + exp } : {}),
    ...(values.ctx !== undefined ? { ctx: values.ctx } : {}),
    ...(values.note !== undefined ? { note: values.note } : {}),
  })
  const event = await broker.eventNew(requested)
  if (event.sentcnt === 0)
    return withdrawn(io, broker, event.eventid, 'no paired authenticator got the request (hemctl auth pair)')
  const answer = await waitOnCloud(
    io,
    'waiting for an authenticator',
    wait ?? Math.max(1, event.exp - nowS()),
    async () => {
      const state = await broker.eventCheck(event.eventid)
      return state.state === 'pending' ? undefined : state
    },
  )
  if (answer === 'interrupted') return withdrawn(io, broker, event.eventid, 'interrupted', EXIT.INTERRUPTED)
  if (answer === 'timeout') {
    const when = wait === undefined ? 'before the request expired' : `within ${wait} s`
    return withdrawn(io, broker, event.eventid, `no authenticator answered ${when}`)
  }
  if (answer.state === 'denied') return stopped(io, 'login', 'denied')
  if (answer.state === 'closed')
    return stopped(
      io,
      'login',
      answer.reason === 'withdrawn' ? 'the request was withdrawn' : `the request ${printable(answer.reason)}`,
    )
  const { token } = await client.extToken(answer.authreply)
  print(io, values.json, { token }, `${token}\n`)
  return 0
}

/** Ends the wait for good: the event is withdrawn at the broker, so no authenticator answers it any more. */
async function withdrawn(
  io: HemctlIo,
  broker: BrokerClient,
  eventid: string,
  why: string,
  exit: number = EXIT.DENIED,
): Promise<number> {
  const told = await broker.eventDelete(eventid).then(
    () => 'the request was withdrawn',
    (err: Error) => `the request could not be withdrawn (${err.message}); it expires by itself`,
  )
  return stopped(io, 'login', `${why}; ${told}`, exit)
}

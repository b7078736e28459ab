// `auto`: the harness's authenticator (contract §4.4): pairs every pending registration of a test-mode cloud and
// answers each event with the next of its decisions, until a signal.
import { parseOptions, UsageError, type Command } from '../index.js'
import {
  BrokerAnswerError,
  isPeriod,
  MemoryPairingStore,
  PairingError,
  type Authenticator,
  type Period,
} from '../../authenticator/index.js'
import { fixedBase64, toBase64 } from '../../protocol/index.js'
import { authenticatorOn, cloudBase, pause, stopSignal, type AuthenticatorIo } from './context.js'
import { eventRound, type Decision } from './event-round.js'
import { keySealer } from './passphrase-sealer.js'

const AUTO_USAGE = `Usage: hem-authenticator auto --cloud URL --decide allow,deny [--period 900] [--ca FILE]
                              [--eid B64 ...] [--label TEXT]

The automatic authenticator of the certification harness: every second it pairs each registration
the cloud lists as pending (GET /notify/register/pending, only on a cloud in test mode) with a
fresh key pair, and answers each new event with the next decision of --decide, repeating the last
one when they run out. Keys live in memory only. Runs until SIGINT or SIGTERM; prints one line
per action.

  --cloud URL     the cloud (https://, or http:// on this host)
  --decide LIST   allow and deny, comma-separated, one per event in order (T-6: allow,deny)
  --period S      the lifetime granted on allow: 900, 3600, 28800 or 86400 (default 900)
  --eid B64       pair only with this device (repeatable; default any)
  --ca FILE       trust this CA (PEM) for the cloud's certificate
  --label TEXT    the pairings' name on the device
  -h, --help      show this help
`

const ROUND_MS = 1000

export const autoCommand: Command<AuthenticatorIo> = {
  summary: 'pair and answer automatically (test harness)',
  usage: AUTO_USAGE,
  run: runAuto,
}

async function runAuto(args: string[], io: AuthenticatorIo): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      cloud: { type: 'string' },
      decide: { type: 'string' },
      period: { type: 'string', default: '900' },
      eid: { type: 'string', multiple: true },
      ca: { type: 'string' },
      label: { type: 'string' },
    },
  })
  if (values.cloud === undefined) throw new UsageError('--cloud is required')
  const cloud = cloudBase(values.cloud)
  const decisions = parseDecisions(values.decide, parsePeriod(values.period))
  const eids = new Set((values.eid ?? []).map(normalEid))
  const authenticator = await authenticatorOn(new MemoryPairingStore(), keySealer(), values.ca, values.label)
  const stop = stopSignal(io)
  const registrations = new Set<string>()
  const events = new Set<string>()
  let answered = 0
  const decide = () => Promise.resolve(decisions[Math.min(answered++, decisions.length - 1)]!)
  io.stdout.write(`auto: polling ${cloud}\n`)
  while (!stop.aborted) {
    try {
      await pairPending(authenticator, cloud, eids, registrations, io)
      await eventRound(authenticator, events, decide, io)
    } catch (err) {
      if (!(err instanceof BrokerAnswerError)) throw err
      io.stdout.write(`cloud: ${err.message}\n`)
    }
    await pause(ROUND_MS, stop)
  }
  io.stdout.write('auto: stopped\n')
  return 0
}

/** Pairs each pending registration not tried before, the link built on our cloud URL (its public name may differ). */
async function pairPending(
  authenticator: Authenticator,
  cloud: string,
  eids: Set<string>,
  tried: Set<string>,
  io: AuthenticatorIo,
): Promise<void> {
  const pending = await authenticator.pendingRegistrations(cloud)
  for (const { rid, eid } of pending) {
    if (tried.has(rid) || (eids.size > 0 && !eids.has(eid))) continue
    tried.add(rid)
    try {
      const offer = await authenticator.offer({ link: `${cloud}/notify/register/challenge/${rid}` }, true)
      if (eids.size > 0 && !eids.has(toBase64(offer.request.eid))) {
        await authenticator.decline(offer)
        io.stdout.write(`refused registration ${rid}: its request names another device\n`)
        continue
      }
      const pairing = await authenticator.accept(offer, cloud)
      io.stdout.write(`paired ${pairing.pid} with device ${pairing.eid} (registration ${rid})\n`)
    } catch (err) {
      if (!(err instanceof PairingError || (err instanceof BrokerAnswerError && err.kind !== 'unavailable'))) throw err
      io.stdout.write(`skipped registration ${rid}: ${err.message}\n`)
    }
  }
}

function parseDecisions(text: string | undefined, period: Period): Decision[] {
  if (text === undefined) throw new UsageError('--decide is required, e.g. allow,deny')
  return text.split(',').map((word) => {
    if (word === 'allow') return { allow: true, period }
    if (word === 'deny') return { allow: false }
    throw new UsageError(`--decide: '${word}' is neither allow nor deny`)
  })
}

export function parsePeriod(text: string): Period {
  const period = Number(text)
  if (!/^\d+$/.test(text) || !isPeriod(period)) throw new UsageError('--period must be 900, 3600, 28800 or 86400')
  return period
}

function normalEid(text: string): string {
  const eid = fixedBase64(text, 32)
  if (!eid) throw new UsageError(`--eid ${text} is not base64 of 32 bytes`)
  return toBase64(eid)
}

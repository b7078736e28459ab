// `approve`: the interactive half of §4.2: poll, show each request, ask allow or deny, the period, the write switch.
import { parseOptions, UsageError, type Command } from '../index.js'
import { BrokerAnswerError, type Approval, type Period } from '../../authenticator/index.js'
import { parsePeriod } from './auto-mode.js'
import {
  authenticatorOn,
  openPairingFile,
  pause,
  STORE_USAGE,
  stopSignal,
  storeOptions,
  type AuthenticatorIo,
} from './context.js'
import { eventRound, type Decision } from './event-round.js'
import { printable } from './pairing-commands.js'

const APPROVE_USAGE = `Usage: hem-authenticator approve [--once] [STORE OPTIONS]

Polls the cloud every 2 s for requests to the paired devices and asks about each: the scope,
the key it names (for keymgmt:use), the device, the requester's address; then allow or deny,
the lifetime (15 min, 1 h, 8 h, 24 h) and, for a storage scope, write access. Runs until
SIGINT or SIGTERM.

  --once                  answer what is pending now, then exit
${STORE_USAGE}
`

const POLL_MS = 2000
const PERIODS: { answer: string; period: Period; text: string }[] = [
  { answer: '1', period: 900, text: '15 min' },
  { answer: '2', period: 3600, text: '1 h' },
  { answer: '3', period: 28800, text: '8 h' },
  { answer: '4', period: 86400, text: '24 h' },
]

export const approveCommand: Command<AuthenticatorIo> = {
  summary: 'answer login requests interactively',
  usage: APPROVE_USAGE,
  run: runApprove,
}

async function runApprove(args: string[], io: AuthenticatorIo): Promise<number> {
  const { values } = parseOptions({ args, options: { ...storeOptions, once: { type: 'boolean' } } })
  const file = await openPairingFile(values, io)
  if ((await file.list()).length === 0) throw new UsageError('no pairings: pair with a device first')
  const authenticator = await authenticatorOn(file, file.sealer, values.ca)
  const stop = stopSignal(io)
  const seen = new Set<string>()
  const decide = (approval: Approval) => ask(approval, io)
  for (;;) {
    try {
      await eventRound(authenticator, seen, decide, io)
    } catch (err) {
      if (!(err instanceof BrokerAnswerError)) throw err
      io.stderr.write(`cloud: ${err.message}\n`)
    }
    if (values.once || stop.aborted) return 0
    await pause(POLL_MS, stop)
  }
}

async function ask(approval: Approval, io: AuthenticatorIo): Promise<Decision> {
  const { opened, pairing } = approval
  const ipinfo = opened.event.ipinfo ?? {}
  const place = [ipinfo.ip, ipinfo.city, ipinfo.country].filter((part) => part).join(', ')
  const lines = [
    `request for ${pairing.hostname ?? pairing.eid}${pairing.user ? ` (user ${pairing.user})` : ''}`,
    `  scope:     ${opened.scope.split('#')[0]}`,
    ...(opened.key ? [`  key:       ${opened.key.label} (type ${opened.key.type})`] : []),
    `  requester: ${place || '(unknown)'}`,
    `  expires:   ${new Date(opened.event.exp * 1000).toISOString()}`,
  ]
  io.stdout.write(`${lines.map(printable).join('\n')}\n`)
  const allow = await io.ask('Allow? [y/N] ')
  if (allow === undefined) throw new UsageError('no terminal to ask on')
  if (!/^y(es)?$/i.test(allow.trim())) return { allow: false }
  const choices = PERIODS.map((p) => `${p.answer}) ${p.text}`).join('  ')
  const chosen = await io.ask(`For how long? ${choices} [1] `)
  const period = PERIODS.find((p) => p.answer === chosen?.trim())?.period ?? parsePeriod('900')
  if (!opened.writeSwitch) return { allow: true, period }
  const write = await io.ask(`Write access? [${opened.writable ? 'Y/n' : 'y/N'}] `)
  const writable = write?.trim() ? /^y(es)?$/i.test(write.trim()) : opened.writable
  return { allow: true, period, writable }
}

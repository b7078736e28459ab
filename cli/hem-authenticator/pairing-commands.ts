// pair, pairings, unpair: §4.1 and §4.3 on the command line.
import { parseOptions, UsageError, type Command } from '../index.js'
import { parsePairingInvite, type PairingOffer } from '../../authenticator/index.js'
import {
  authenticatorOn,
  cloudBase,
  openPairingFile,
  STORE_USAGE,
  storeOptions,
  type AuthenticatorIo,
} from './context.js'

const PAIR_USAGE = `Usage: hem-authenticator pair <QR-JSON|LINK> [--cloud URL] [--yes] [--label TEXT] [STORE OPTIONS]

Pairs with a device from the JSON of its QR code ({"link","hash","user","email","hostname"}) or
the bare registration link: shows the device's user, host name, e-mail and the address it
registered from, asks for consent, then stores a fresh key pair sealed with the passphrase.

  --cloud URL             the cloud to poll for this pairing's events (default: the link's)
  --yes                   pair without asking
  --label TEXT            the pairing's name on the device (default "${'hem-authenticator (<platform>)'}")
${STORE_USAGE}
`

const PAIRINGS_USAGE = `Usage: hem-authenticator pairings [STORE OPTIONS]

Lists the stored pairings: pid, device eid, user, host name, cloud, when made.

${STORE_USAGE}
`

const UNPAIR_USAGE = `Usage: hem-authenticator unpair PID [STORE OPTIONS]

Tells the cloud to stop routing the device's events to this pairing (with a proof made with the
pairing's key), then forgets the pairing. The device keeps its key until it is deleted there
(hemctl auth unpair, or DELETE /api/keymgmt/delete/<kid>).

${STORE_USAGE}
`

export const pairingCommands: Record<string, Command<AuthenticatorIo>> = {
  pair: { summary: 'pair with a device from its QR code or link', usage: PAIR_USAGE, run: runPair },
  pairings: { summary: 'list the stored pairings', usage: PAIRINGS_USAGE, run: runPairings },
  unpair: { summary: 'remove a pairing at the cloud and here', usage: UNPAIR_USAGE, run: runUnpair },
}

async function runPair(args: string[], io: AuthenticatorIo): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: { ...storeOptions, cloud: { type: 'string' }, yes: { type: 'boolean' }, label: { type: 'string' } },
  })
  if (positionals.length !== 1) throw new UsageError('one QR payload or link is needed')
  const invite = parsePairingInvite(positionals[0]!)
  cloudBase(invite.link)
  const base = values.cloud === undefined ? undefined : cloudBase(values.cloud)
  const file = await openPairingFile(values, io)
  const authenticator = await authenticatorOn(file, file.sealer, values.ca, values.label)
  const offer = await authenticator.offer(invite)
  io.stdout.write(describeOffer(offer))
  if (!values.yes) {
    const answer = await io.ask('Pair with this device? [y/N] ')
    if (answer === undefined) throw new UsageError('no terminal to ask for consent on: give --yes')
    if (!/^y(es)?$/i.test(answer.trim())) {
      await authenticator.decline(offer)
      io.stdout.write('refused: the registration is closed\n')
      return 1
    }
  }
  const pairing = await authenticator.accept(offer, base)
  io.stdout.write(`paired: pid ${pairing.pid}\n`)
  return 0
}

function describeOffer(offer: PairingOffer): string {
  const { invite, ipinfo } = offer
  const place = [ipinfo.ip, ipinfo.city, ipinfo.country].filter((part) => part).join(', ')
  const lines = [
    `device:   ${invite.hostname ?? '(not given)'}`,
    `user:     ${invite.user ?? '(not given)'}`,
    `e-mail:   ${invite.email ?? '(not given)'}`,
    `from:     ${place || '(unknown)'}`,
  ]
  return `${lines.map(printable).join('\n')}\n`
}

async function runPairings(args: string[], io: AuthenticatorIo): Promise<number> {
  const { values } = parseOptions({ args, options: storeOptions })
  const file = await openPairingFile(values, io)
  const pairings = await file.list()
  if (pairings.length === 0) io.stdout.write('no pairings\n')
  for (const p of pairings) {
    const who = [p.user, p.hostname].filter((part) => part).join('@')
    const made = new Date(p.created * 1000).toISOString()
    io.stdout.write(printable(`${p.pid}  eid ${p.eid}  ${who || '-'}  ${p.baseUrl}  ${made}`) + '\n')
  }
  return 0
}

async function runUnpair(args: string[], io: AuthenticatorIo): Promise<number> {
  const { values, positionals } = parseOptions({ args, allowPositionals: true, options: storeOptions })
  if (positionals.length !== 1) throw new UsageError('one PID is needed')
  const file = await openPairingFile(values, io)
  const authenticator = await authenticatorOn(file, file.sealer, values.ca)
  const pairing = await authenticator.unpair(positionals[0]!)
  io.stdout.write(`unpaired ${pairing.pid}: delete its key on the device too (hemctl auth unpair, or keymgmt/delete)\n`)
  return 0
}

/** Text from a device or the cloud, shown on a terminal: control characters become `?`. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
}

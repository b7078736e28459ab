// hemctl's commands on the external authenticators (ext-auth-contract Sequence A, §1.6, §3.4.7):
// pair one through the family's broker, list the pairings, remove one from the device and the broker.
import QRCode from 'qrcode'
import { parseExtJwt } from '../../protocol/index.js'
import { type Command, parseOptions, UsageError } from '../index.js'
import {
  BrokerRefusedError,
  deviceProof,
  type BrokerClient,
  type HemClient,
  pairingQrPayload,
  printable,
  type Subscriber,
} from '../../client/index.js'
import { connect, connectionOptions, onePositional, print, usageText, type HemctlIo } from './context.js'
import { brokerFor, CLOUD_USAGE, cloudOptions, seconds, stopped, waitOnCloud } from './cloud.js'
import { CommandFailure, EXIT } from './failure.js'
import { group } from './group.js'

// ---- pair (Sequence A) ----

const pair: Command<HemctlIo> = {
  summary: 'pair an authenticator (a phone) with the device, through the cloud',
  usage: usageText(
    'auth pair --cloud URL [--cloud-ca FILE] [--wait SECONDS] [CONNECTION OPTIONS]',
    `Pairs an authenticator: shows a QR code (its JSON payload and the link as text too) for the
authenticator to scan, waits for it, has the device store its key and tells the broker. Logs in
with scope auth:ext:pair (the user's passphrase). Prints the new pairing's KID and label.`,
    `${CLOUD_USAGE}  --wait SECONDS      how long to wait for the authenticator (default 120)
`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: { ...connectionOptions, ...cloudOptions, wait: { type: 'string', default: '120' } },
    })
    const wait = seconds('--wait', values.wait)
    const broker = await brokerFor(values, { required: true })
    const client = await connect(values, io)
    const device = await client.pairingIdentity()
    const { epk } = await broker.deviceSession(device.eid)
    const { request, eid } = await client.extInit(epk)
    if (eid !== device.eid) throw new CommandFailure('the device answered ext/init with another eid than its own')
    const { rid, link } = await broker.registerInit({ epk, eid, request })
    // With --json, stdout holds the result alone: what the owner scans goes to stderr.
    const shown = values.json ? io.stderr : io.stdout
    shown.write(await scanText(pairingQrPayload(link, request, device), link))
    const answer = await waitOnCloud(io, 'waiting for the authenticator', wait, async () => {
      const state = await broker.registerCheck(rid)
      return state.state === 'pending' ? undefined : state
    })
    if (answer === 'interrupted') return stopped(io, 'auth pair', 'interrupted', EXIT.INTERRUPTED)
    if (answer === 'timeout') return stopped(io, 'auth pair', `no authenticator answered within ${wait} s`)
    if (answer.state === 'closed')
      return stopped(io, 'auth pair', `the broker closed the pairing: ${printable(answer.reason)}`)
    const validated = await client.extValidate(answer.pid, answer.reply)
    await broker.registerFinalise(rid, validated)
    const label = labelOf(answer.reply)
    const value = { kid: validated.kid, label, pid: answer.pid }
    print(io, values.json, value, `paired: KID ${value.kid}, label ${JSON.stringify(printable(label))}\n`)
    return 0
  },
}

/** The QR code drawn for a terminal, its payload and the link (for an authenticator given text). */
async function scanText(payload: string, link: string): Promise<string> {
  const drawn = await QRCode.toString(payload, { type: 'terminal', small: true })
  return (
    `Scan this with the authenticator (or give it the payload or the link):\n\n${drawn}\n` +
    `payload: ${terminalSafeJson(payload)}\nlink: ${printable(link)}\n`
  )
}

/** JSON whose strings hold no character a terminal acts on: escaped, the same JSON value. */
function terminalSafeJson(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** The authenticator's name for itself, as its reply gives it (the device verified the reply). */
function labelOf(reply: string): string {
  const { label } = parseExtJwt(reply).payload
  return typeof label === 'string' ? label : ''
}

// ---- pairings ----

const pairings: Command<HemctlIo> = {
  summary: "list the device's paired authenticators (and, with --cloud, the broker's)",
  usage: usageText(
    'auth pairings [--cloud URL [--cloud-ca FILE]] [CONNECTION OPTIONS]',
    `Lists the authenticators paired with the device: its keys whose description is "EXTAID" and a
pid (scope keymgmt:search). With --cloud, also what the broker knows of them, proved by the
device (ext/mac, scope auth:ext:pair): a pairing missing on either side is named.`,
    CLOUD_USAGE,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: { ...connectionOptions, ...cloudOptions } })
    const broker = await brokerFor(values, { required: false })
    const client = await connect(values, io)
    const device = await client.extPairings()
    if (!broker) {
      const text = device.length === 0 ? 'No authenticator is paired with the device.\n' : table(device)
      print(io, values.json, { device }, text)
      return 0
    }
    const { eid } = await client.pairingIdentity()
    const atBroker = await broker.subscribersList(await deviceProof(client, broker, eid))
    print(io, values.json, { device, broker: atBroker }, bothSides(device, atBroker))
    return 0
  },
}

interface Row {
  kid: string
  pid: string
  label: string
}

function table(rows: Row[], note: (row: Row) => string = () => ''): string {
  const lines = rows.map((row) => `${row.kid}  ${row.pid}  ${JSON.stringify(printable(row.label))}${note(row)}\n`)
  return `${'KID'.padEnd(32)}  ${'PID'.padEnd(44)}  LABEL\n${lines.join('')}`
}

function bothSides(device: Row[], atBroker: Subscriber[]): string {
  const brokerPids = new Set(atBroker.map((s) => s.pid))
  const devicePids = new Set(device.map((p) => p.pid))
  const onlyBroker = atBroker.filter((s) => !devicePids.has(s.pid))
  const text = [
    device.length === 0
      ? 'No authenticator is paired with the device.\n'
      : table(device, (row) => (brokerPids.has(row.pid) ? '' : '  (not at the broker: it gets no request)')),
  ]
  if (onlyBroker.length > 0)
    text.push(`\nAt the broker only (the device has no key for them):\n${table(onlyBroker.map(brokerRow))}`)
  return text.join('')
}

/** A subscriber's fields come from the broker: only their printable part is shown. */
function brokerRow(s: Subscriber): Row {
  return { kid: printable(s.kid), pid: s.pid, label: s.label }
}

// ---- unpair ----

const unpair: Command<HemctlIo> = {
  summary: 'remove a paired authenticator from the device (and, with --cloud, from the broker)',
  usage: usageText(
    'auth unpair KID [--cloud URL [--cloud-ca FILE]] [CONNECTION OPTIONS]',
    `Deletes the pairing KID (a key whose description is "EXTAID" and a pid) from the device (scope
keymgmt:del): its authenticator can approve nothing more. With --cloud the broker is told too
(subscribers/delete with the device's proof), so the authenticator stops getting requests; a
pairing already gone from the device is then removed from the broker alone.`,
    CLOUD_USAGE,
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      allowPositionals: true,
      options: { ...connectionOptions, ...cloudOptions },
    })
    const kid = onePositional(positionals, 'the KID of the pairing').toLowerCase()
    if (!/^[0-9a-f]{32}$/.test(kid)) throw new UsageError('a KID is 32 hex digits')
    const broker = await brokerFor(values, { required: false })
    const client = await connect(values, io)
    const onDevice = (await client.extPairings()).find((p) => p.kid === kid)
    if (!onDevice && !broker)
      throw new CommandFailure(`${kid} is no pairing of the device ('hemctl auth pairings' lists them)`)
    if (onDevice) await client.deleteKey(kid)
    const device = onDevice ? 'removed' : 'absent'
    const lines = [onDevice ? `removed from the device: KID ${kid}\n` : `the device has no pairing ${kid}\n`]
    if (!broker) {
      print(io, values.json, { kid, pid: onDevice!.pid, device }, lines.join(''))
      return 0
    }
    try {
      const told = await unpairAtBroker(client, broker, kid, onDevice?.pid)
      if (!onDevice && !told.removed)
        throw new CommandFailure(`${kid} is a pairing neither of the device nor of the broker`)
      lines.push(told.removed ? `removed from the broker: pid ${told.pid}\n` : `the broker has no pairing ${kid}\n`)
      print(
        io,
        values.json,
        { kid, pid: told.pid, device, broker: told.removed ? 'removed' : 'absent' },
        lines.join(''),
      )
      return 0
    } catch (err) {
      if (onDevice)
        io.stderr.write(`hemctl auth unpair: removed from the device (KID ${kid}), but not from the broker:\n`)
      throw err
    }
  },
}

/** Removes the pairing from the broker: by the device's pid, else by the broker's own record of the KID. */
async function unpairAtBroker(
  client: HemClient,
  broker: BrokerClient,
  kid: string,
  devicePid: string | undefined,
): Promise<{ pid: string | undefined; removed: boolean }> {
  const { eid } = await client.pairingIdentity()
  const pid =
    devicePid ?? (await broker.subscribersList(await deviceProof(client, broker, eid))).find((s) => s.kid === kid)?.pid
  if (pid === undefined) return { pid, removed: false }
  try {
    await broker.subscribersDelete({ ...(await deviceProof(client, broker, eid)), pid })
    return { pid, removed: true }
  } catch (err) {
    if (err instanceof BrokerRefusedError && err.status === 404) return { pid, removed: false }
    throw err
  }
}

export const authCommands: Record<string, Command<HemctlIo>> = {
  auth: group('hemctl auth', 'pair, list and remove external authenticators (phones that approve logins)', {
    pair,
    pairings,
    unpair,
  }),
}

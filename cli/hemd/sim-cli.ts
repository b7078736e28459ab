import { connect, type NatsConnection } from '@nats-io/transport-node'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type CommandReply, DEADLINE_MS, Subjects } from '../../protocol/index.js'
import { callService, inboxPrefix } from '../../bus/index.js'
import type { SimCommand } from '../../actors/system/index.js'
import { readSimControl } from '../../runtime/index.js'

const USAGE = `Usage: hemd sim [--data DIR] COMMAND

Injects a fault into a running simulated device (never possible on real hardware), through
its bus. Prints the device's answer as JSON, with the fls_state it caused.

Commands:
  temperature C          the chip sensor reads C degrees Celsius from now on
  temperature normal     the sensor reads the normal temperature again
  entropy stuck|biased   the entropy source repeats one byte / gives four zero bytes in five
  entropy ok             the entropy source is sound again (a latched failure needs a reboot)
  disk full|free         every write to the device's data fails as on a full disk / works again
  format POINT           every format of the disks (P) stops at POINT until format go: start
                         (before its first write), middle (Disk 0 written, Disk 1 not) or end
                         (all written, before it returns); for drills of a power cut or a stop
  format go              formats run through again (a held one goes on)
  corrupt journal        flips a byte in a record of the newest journal file
  corrupt key            flips a byte in the first stored key record
  status                 samples the sensors now and shows fls_state

Options:
  --data DIR             the device's data directory (default ./var/hemd)
  -h, --help             show this help

Exit status: 0 done, 1 the device refused or cannot be reached, 2 usage.
`

export async function runSimCli(argv: string[]): Promise<number> {
  let dataDir: string
  let command: SimCommand | 'help'
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        data: { type: 'string', default: './var/hemd' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
    dataDir = resolve(values.data)
    command = values.help ? 'help' : parseSimCommand(positionals)
  } catch (err) {
    process.stderr.write(`hemd sim: ${(err as Error).message}\n\n${USAGE}`)
    return 2
  }
  if (command === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  try {
    const reply = await sendSimCommand(dataDir, command)
    process.stdout.write(`${JSON.stringify(reply.body ?? {})}\n`)
    return reply.status === 200 ? 0 : 1
  } catch (err) {
    process.stderr.write(`hemd sim: ${(err as Error).message}\n`)
    return 1
  }
}

/** Sends one sim command to the device running on `dataDir`; throws when there is none to reach. */
export async function sendSimCommand(dataDir: string, command: SimCommand): Promise<CommandReply> {
  const access = await readSimControl(join(dataDir, 'run'))
  if (!access) throw new Error(`no simulated device has run in ${dataDir} (start one with: hemd --data ${dataDir})`)
  let nc: NatsConnection
  try {
    nc = await connect({
      servers: access.url,
      name: 'hemd-sim',
      inboxPrefix: inboxPrefix('simctl'),
      maxReconnectAttempts: 0,
      timeout: 5000,
      ...(access.credentials ? { user: access.credentials.user, pass: access.credentials.pass } : {}),
    })
  } catch (err) {
    throw new Error(`the device in ${dataDir} cannot be reached: ${(err as Error).message}`, { cause: err })
  }
  try {
    const request = { rid: `sim-${randomBytes(4).toString('hex')}`, tls: false, body: command }
    return await callService(
      nc,
      new Subjects(access.devid).command('system', 'sim'),
      request,
      DEADLINE_MS.medium,
      'the sim command was not answered',
    )
  } catch (err) {
    throw new Error(`the device in ${dataDir} did not answer: ${(err as Error).message}`, { cause: err })
  } finally {
    await nc.close()
  }
}

export function parseSimCommand(words: string[]): SimCommand {
  const [verb, arg, extra] = words
  if (extra !== undefined) throw new Error(`unexpected argument ${extra}`)
  switch (verb) {
    case 'temperature':
      if (arg === 'normal') return { action: 'temperature', celsius: null }
      if (arg !== undefined && /^-?\d{1,3}(\.\d+)?$/.test(arg)) return { action: 'temperature', celsius: Number(arg) }
      throw new Error('temperature takes degrees Celsius (e.g. 95 or -50) or normal')
    case 'entropy':
      if (arg === 'ok') return { action: 'entropy', fault: 'none' }
      if (arg === 'stuck' || arg === 'biased') return { action: 'entropy', fault: arg }
      throw new Error('entropy takes stuck, biased or ok')
    case 'disk':
      if (arg === 'full' || arg === 'free') return { action: 'disk', full: arg === 'full' }
      throw new Error('disk takes full or free')
    case 'format':
      if (arg === 'go') return { action: 'format', hold: null }
      if (arg === 'start' || arg === 'middle' || arg === 'end') return { action: 'format', hold: arg }
      throw new Error('format takes start, middle, end or go')
    case 'corrupt':
      if (arg === 'journal') return { action: 'corrupt-journal' }
      if (arg === 'key') return { action: 'corrupt-key' }
      throw new Error('corrupt takes journal or key')
    case 'status':
      if (arg !== undefined) throw new Error(`unexpected argument ${arg}`)
      return { action: 'status' }
    case undefined:
      throw new Error('a command is missing')
    default:
      throw new Error(`unknown command ${verb}`)
  }
}

// hem-cloud: the family's cloud (check-in, domain, notify) as a service of one's own. A thin
// shell over cloud/: parse the flags, start it, print a banner, stop on a signal.

import { connect } from '@nats-io/transport-node'
import { pino, type Logger } from 'pino'
import {
  DEVID,
  DeviceRegistry,
  DomainCaError,
  jetStreamState,
  NatsAccessError,
  readNatsAccess,
  startCloud,
} from '../../cloud/index.js'
import { commandsUsage, parseOptions, runCommandLine, UsageError, type CliIo, type CommandLine } from '../index.js'
import { SERVE_OPTIONS, serveOptions, storeOf } from './serve-options.js'

const SERVE_USAGE = `Usage: hem-cloud [serve] --backend-key FILE (--data DIR | --nats URL [--replicas N]) [OPTIONS]

Serves the family's cloud: POST /checkin, /domain/* and /notify/* (docs/ext-auth.md "The cloud").

  --listen HOST:PORT     where to listen (default 127.0.0.1:8480)
  --tls-cert FILE        PEM certificate chain: HTTPS, TLS 1.3 only (without: plain HTTP, said loudly)
  --tls-key FILE         its PEM private key
  --backend-key FILE     Ed25519 PEM private key that signs check-in replies (devices: hemd --backend-key)
  --ca-cert FILE         the domain service: its CA's PEM certificate (then any above it)
  --ca-key FILE          the CA's ECDSA P-256 PEM private key
  --domain NAME          the zone the prefixes are names in (e.g. ence.do)
  --predefined PREFIX    a shared prefix every device may have, repeatable (default my)
  --authkey KEY          an operator auth key for /domain/register/PREFIX/KEY, repeatable
  --factory-ca FILE      the factory CA's PEM certificate: then a genuine must be its signed statement
  --data DIR             run an own nats-server with JetStream, its state in DIR
  --nats URL             join an existing JetStream cluster instead (nats://user:pass@host:port)
  --replicas N           copies of each bucket on that cluster: 1, 3 or 5 (default 1)
  --test-mode            GET /notify/register/pending answers (automatic authenticators; never in production)
  --public-url URL       the base of the links the cloud hands out (default: its own URL)
  --log-level LEVEL      fatal, error, warn, info, debug, trace, silent (default info)
  -h, --help             show this help
`

const DEVICE_USAGE = `Usage: hem-cloud device ACTION DEVID (--data DIR | --nats URL [--replicas N])

The device registry of a running cloud; ACTION is one of:
  policy DEVID ORDER     the order the device gets at its next check-in (lock, shutdown; none clears it)
  repin DEVID            forget the device's pinned log key: its next check-in pins the key it then states
  show DEVID             print the registry entry as JSON

  --data DIR             the data dir of a cloud running its own nats-server
  --nats URL             the cluster a cloud joined
  --replicas N           as the cloud was started with
`

const commands = {
  serve: { summary: 'serve the cloud', usage: SERVE_USAGE, run: runServe },
  device: { summary: 'show or change a device in the registry', usage: DEVICE_USAGE, run: runDevice },
}

const cli: CommandLine = {
  program: 'hem-cloud',
  usage: commandsUsage('hem-cloud', '[COMMAND] [OPTIONS]', commands),
  commands,
  failure: (err) =>
    err instanceof DomainCaError || err instanceof NatsAccessError || isUnreachable(err) ? err.message : undefined,
}

/** `hem-cloud --listen …` is `hem-cloud serve --listen …`. */
export function main(argv: string[], io: CliIo): Promise<number> {
  const [first] = argv
  const serve = first === undefined || (first.startsWith('-') && first !== '--help' && first !== '-h')
  return runCommandLine(cli, serve ? ['serve', ...argv] : argv, io)
}

async function runServe(args: string[], io: CliIo): Promise<number> {
  const { values } = parseOptions({ args, options: SERVE_OPTIONS })
  const level = values['log-level']
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level))
    throw new UsageError(`unknown --log-level ${level}`)
  const { options, warnings } = await serveOptions(values)
  const logger = pino({ level, base: { svc: 'hem-cloud' } }, pino.destination(2))
  const cloud = await startCloud({ ...options, logger })
  const state = 'dataDir' in options.store ? `own nats-server, data in ${options.store.dataDir}` : 'joined cluster'
  io.stderr.write(
    [`hem-cloud listening on ${cloud.url} (${state})`, ...warnings.map((warning) => `WARNING: ${warning}`), ''].join(
      '\n',
    ),
  )
  await untilSignal(logger)
  await cloud.stop()
  return 0
}

async function runDevice(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: { data: { type: 'string' }, nats: { type: 'string' }, replicas: { type: 'string' } },
  })
  const [action, devid, order, ...rest] = positionals
  if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}`)
  if (devid === undefined || !DEVID.test(devid)) throw new UsageError('DEVID must be 16 lower-case hex digits')
  const change = registryChange(action, order)
  const store = storeOf(values)
  const access = 'dataDir' in store ? await readNatsAccess(store.dataDir) : store.nats
  const nc = await connect({
    servers: access.url.split(','),
    ...('user' in access ? { user: access.user, pass: access.pass } : {}),
  })
  try {
    const registry = await DeviceRegistry.open(jetStreamState(nc, 'replicas' in store ? store.replicas : 1))
    const record = change ? await registry.update(devid, change) : await registry.get(devid)
    io.stdout.write(`${JSON.stringify({ devid, ...record })}\n`)
    return 0
  } finally {
    await nc.close()
  }
}

type Change = Parameters<DeviceRegistry['update']>[1]

/** What `action` does to a registry entry; undefined for `show`. */
function registryChange(action: string | undefined, order: string | undefined): Change | undefined {
  if (action === 'show' || action === 'repin') {
    if (order !== undefined) throw new UsageError(`${action} takes DEVID only`)
    if (action === 'show') return undefined
    return (current) => {
      const { eid_sign: _pinned, ...rest } = current ?? {}
      return rest
    }
  }
  if (action !== 'policy') throw new UsageError('the action is policy, repin or show')
  if (order !== 'lock' && order !== 'shutdown' && order !== 'none')
    throw new UsageError('the order is lock, shutdown or none')
  return (current) => {
    const { policy: _old, ...rest } = current ?? {}
    return order === 'none' ? rest : { ...rest, policy: order }
  }
}

function isUnreachable(err: unknown): err is Error {
  return err instanceof Error && /CONNECTION_REFUSED|ECONNREFUSED|Authorization Violation/i.test(err.message)
}

/** The first SIGINT or SIGTERM stops the cloud; later ones are ignored while it stops. */
function untilSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return
      stopping = true
      logger.info({ signal }, 'stopping')
      resolve()
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
}

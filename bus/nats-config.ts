import { join } from 'node:path'
import { PID_FILE } from './nats-server.js'
import { FLEET_ACCOUNT, inboxPrefix, type ServiceSpec } from './services.js'
import { journalStreamId } from './stream-names.js'
import { BATCH_LIMITS, Subjects } from '../protocol/index.js'

export interface NatsUserCredentials {
  user: string
  pass: string
}

export interface NatsConfigOptions {
  host: string
  /** -1 lets nats-server pick a free port (read back from the ports file). */
  port: number
  portsFileDir: string
  subjects: Subjects
  services: readonly ServiceSpec[]
  credentials: ReadonlyMap<string, NatsUserCredentials>
  /** The fleet backend this device's bus links to as a leaf node, and the generation of the stream mirrored to. */
  backend?: { url: string; generation?: number }
}

/** The nats-server configuration: loopback only, one user per service with least-privilege subjects. */
export function renderNatsConfig(o: NatsConfigOptions): string {
  const users = o.services.filter((spec) => !spec.account).map((spec) => renderUser(spec, o))
  const accounts = [...new Set(o.services.flatMap((spec) => (spec.account ? [spec.account] : [])))].map((account) => {
    const members = o.services.filter((spec) => spec.account === account).map((spec) => renderUser(spec, o))
    return `  ${account}: { users: [ ${members.join(', ')} ] }`
  })
  return [
    `listen: "${o.host}:${o.port}"`,
    `ports_file_dir: ${quote(o.portsFileDir)}`,
    `pid_file: ${quote(join(o.portsFileDir, PID_FILE))}`,
    'max_payload: 1048576',
    'max_connections: 64',
    'authorization {',
    '  users: [',
    ...users.map((u) => `    ${u}`),
    '  ]',
    '}',
    ...(accounts.length > 0 ? ['accounts {', ...accounts, '}'] : []),
    ...(o.backend ? renderLeafRemote(o.backend.url) : []),
    '',
  ].join('\n')
}

/**
 * The link to the fleet backend. A leaf-node link merges the subject space of the account it is
 * bound to with the backend's: bound to the fleet account, where the mirror is the only user, the
 * backend reaches the mirror's inbox and nothing of the device's own account (commands, events,
 * the services' inboxes), whatever the backend's configuration says.
 */
function renderLeafRemote(url: string): string[] {
  return ['leafnodes {', `  remotes: [ { url: ${quote(url)}, account: ${quote(FLEET_ACCOUNT)} } ]`, '}']
}

function renderUser(spec: ServiceSpec, o: NatsConfigOptions): string {
  const cred = o.credentials.get(spec.name)
  if (!cred) throw new TypeError(`no credentials for service ${spec.name}`)
  const s = o.subjects
  const publish = spec.calls.map((c) => {
    const [service, op] = c.split('.') as [string, string | undefined]
    return op === undefined ? s.commands(service) : s.command(service, op)
  })
  // Following a read model means asking for its current state too (read-model-bus.ts resync).
  publish.push(...spec.listens.map((l) => s.command(l, 'state')))
  const subscribe = [...spec.listens.map((l) => s.events(l)), `${inboxPrefix(spec.name)}.>`]
  if (spec.readsMetrics) subscribe.push(s.metrics('*'))
  const streamId = journalStreamId(s.devid, o.backend?.generation)
  publish.push(
    ...(spec.publishes ?? []).map((subject) =>
      subject.replaceAll('{devid}', s.devid).replaceAll('{stream-id}', streamId),
    ),
  )
  if (spec.serves) {
    publish.push(s.events(spec.name))
    subscribe.push(s.commands(spec.name))
  }
  const denied = (spec.denies ?? []).map((d) => {
    const [service, op] = d.split('.') as [string, string]
    return s.command(service, op)
  })
  const permissions = [
    `publish: { allow: ${list(publish)}${denied.length > 0 ? `, deny: ${list(denied)}` : ''} }`,
    `subscribe: { allow: ${list(subscribe)} }`,
    // A reply to each request it took, and no other publish to an inbox; an envelope's replies may come in as many
    // messages as it holds commands (bus/batch-replies.ts).
    ...(spec.serves ? [`allow_responses: { max: ${BATCH_LIMITS.commands} }`] : []),
  ].join(', ')
  return `{ user: ${quote(cred.user)}, password: ${quote(cred.pass)}, permissions: { ${permissions} } }`
}

function list(items: string[]): string {
  return `[${items.map(quote).join(', ')}]`
}

function quote(value: string): string {
  return JSON.stringify(value)
}

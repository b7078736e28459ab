// The cached status (gateway/status-rendering.ts) answers byte for byte what renderStatus renders,
// in every case the contract names, and a change of a read model shows in the very next answer.
import { hostClock } from '../hal/sim/host-clock.js'
import t from 'tap'
import type { Clock } from '../hal/types.js'
import type { Variant } from '../protocol/device.js'
import type { Principal } from '../protocol/bus-messages.js'
import { EncodedJson } from '../gateway/encoded-json.js'
import { renderStatus } from '../gateway/status.js'
import { StatusRendering } from '../gateway/status-rendering.js'
import type { ReadContext } from '../gateway/types.js'
import type { DeviceView } from '../gateway/device-view.js'

const NOW = Date.UTC(2026, 10, 22, 0, 37, 13, 456)

/** A clock the test moves; `wall` undefined: never set. */
class TestClock implements Clock {
  wall: number | undefined = NOW
  mono = 62_999
  now = () => this.wall ?? 0
  monotonic = () => this.mono
  isSet = () => this.wall !== undefined
  sleep = hostClock.sleep
  timer = hostClock.timer
}

interface Patch {
  system?: Partial<DeviceView['system']['status']>
  identity?: Partial<DeviceView['identity']>
  transport?: Partial<DeviceView['identity']['transport']>
  keystore?: Partial<DeviceView['keystore']>
  storage?: DeviceView['storage']
  upgrade?: Partial<DeviceView['upgrade']>
}

/** Fresh objects every time, as the bus decodes every state event anew. */
function device(variant: Variant, patch: Patch = {}): DeviceView {
  return {
    system: {
      variant,
      bootedAt: 1_000,
      version: { hwv: 'PPA-1.0', fwv: '1.2.3', fwk: 'k', fws: 's', blv: '0.9.0', blk: 'k', bls: 's' },
      status: { fls_state: 0, temp: 41, ...patch.system },
    },
    identity: {
      token_key: 'key',
      ctx: 7,
      inited: true,
      trusted_ts: true,
      allow_keysearch: false,
      intact: true,
      ...patch.identity,
      transport: { hostname: 'hem.local', origin: '', hsts: false, dosprot: 0, ...patch.transport },
    },
    keystore: {
      fls: 0,
      engine: 'native',
      repo_stats: { total: 3, deleted: 1, invalid: 0, freeespace: 1021, fragmentation: 33 },
      ...patch.keystore,
    },
    storage: patch.storage ?? (variant === 'P' ? { storage: ['1000:rw', '2000:-'] } : {}),
    upgrade: { fw: 'idle', ui: 'idle', ...patch.upgrade },
  }
}

const principal: Principal = { sub: 'U', scope: 'keymgmt:gen' }

function context(
  view: DeviceView,
  clock: Clock,
  request: { tls: boolean; host: string; token: boolean },
  variant: Variant = view.system.variant,
): ReadContext {
  return {
    rid: 'r',
    variant,
    tls: request.tls,
    host: request.host,
    ...(request.token ? { principal } : {}),
    params: {},
    ...view,
    clock,
    readModel: () => undefined,
  }
}

function cachedText(rendering: StatusRendering, ctx: ReadContext): string {
  const reply = rendering.render(ctx)
  if (reply.status !== 200 || !(reply.body instanceof EncodedJson)) throw new Error('not a cached status')
  return reply.body.text
}

const plainText = (ctx: ReadContext) => JSON.stringify(renderStatus(ctx).body)

const projections: [string, Variant, Patch][] = [
  ['healthy P', 'P', {}],
  ['E', 'E', {}],
  ['fail state of the system', 'P', { system: { fls_state: 0x04 } }],
  ['fail state of the key store', 'P', { keystore: { fls: 0x20 } }],
  ['journal not intact', 'P', { identity: { intact: false } }],
  ['not personalised', 'P', { identity: { inited: false, ctx: 0 } }],
  ['format', 'P', { identity: { format: 'v2' } }],
  ['untrusted time', 'P', { identity: { trusted_ts: false } }],
  ['no storage yet', 'P', { storage: {} }],
  ['storage on E is not shown', 'E', { storage: { storage: ['1000:rw', '2000:-'] } }],
  ['firmware upgrade', 'P', { upgrade: { fw_upgrade: true } }],
  ['mirror', 'P', { system: { mirror: { state: 'mismatch', stream: 'hem-journal', detail: 'record 7' } } }],
  ['no hostname', 'P', { transport: { hostname: '' } }],
  ['hostname in capitals', 'P', { transport: { hostname: 'HEM.Local' } }],
  ['temperature', 'P', { system: { temp: -3 } }],
  ['any origin', 'E', { transport: { origin: '*' } }],
]

const hosts = ['hem.local', 'HEM.LOCAL:8443', '10.0.0.1:443', '[::1]:8443', '']

t.test('the cached status is the plain rendering, byte for byte, in every case', async (t) => {
  const rendering = new StatusRendering()
  const clock = new TestClock()
  let compared = 0
  for (const [name, variant, patch] of projections) {
    for (const wall of [NOW, undefined]) {
      clock.wall = wall
      // One view for all the requests: the texts rendered for one request are there for the next.
      const view = device(variant, patch)
      for (const tls of [false, true])
        for (const host of hosts)
          for (const token of [false, true]) {
            const ctx = context(view, clock, { tls, host, token })
            t.equal(
              cachedText(rendering, ctx),
              plainText(ctx),
              `${name}, ${JSON.stringify({ wall, tls, host, token })}`,
            )
            compared++
          }
    }
  }
  t.equal(compared, projections.length * 2 * 2 * hosts.length * 2)
  const keys = (ctx: ReadContext) => Object.keys(JSON.parse(cachedText(rendering, ctx)) as object)
  clock.wall = NOW
  t.strictSame(
    keys(context(device('P', { upgrade: { fw_upgrade: true } }), clock, { tls: false, host: '', token: true })),
    ['ctx', 'fls_state', 'uptime', 'temp', 'ts', 'time', 'https', 'hostname', 'storage', 'fw_upgrade', 'repo_stats'],
    'keys in the contract order',
  )
})

t.test('status shows the CORS origin only when the owner allowed every page', async (t) => {
  const clock = new TestClock()
  const origin = (value: string) =>
    renderStatus(context(device('E', { transport: { origin: value } }), clock, { tls: true, host: '', token: false }))
      .body as Record<string, unknown>
  t.equal(origin('*').origin, '*')
  for (const value of ['', 'https://app.example', '*.example.com']) t.notOk('origin' in origin(value), value)
})

t.test('the texts of one state are reused, and renewed by a new second or a new read model', async (t) => {
  const rendering = new StatusRendering()
  const clock = new TestClock()
  // Uptime 60.0 s, the wall clock at .456 s.
  clock.mono = 61_000
  const view = device('P')
  const request = { tls: true, host: 'hem.local', token: false }
  const first = rendering.render(context(view, clock, request)).body
  clock.wall = NOW + 100
  clock.mono += 100
  t.equal(rendering.render(context(view, clock, request)).body, first, 'within the same seconds: the same text')

  const check = (what: string, ctx: ReadContext) => t.equal(cachedText(rendering, ctx), plainText(ctx), what)
  // .456 + 0.1 + 0.6 s: the wall clock's second turns, the uptime's (60.0 + 0.1 + 0.6 s) not.
  clock.wall = NOW + 600
  clock.mono += 600
  const turned = context(view, clock, request)
  t.match(cachedText(rendering, turned), /"uptime":60,.*"time":1795307834,/, 'the new second')
  check('the clock turns a second', turned)
  clock.mono += 400
  check('the uptime turns a second', context(view, clock, request))
  clock.wall = NOW - 3_600_000
  check('the clock is set back', context(view, clock, request))
  clock.wall = undefined
  check('the clock forgets its time', context(view, clock, request))

  clock.wall = NOW
  // Each a new object of one read model only, the others as they were.
  const changes: [string, keyof DeviceView, Patch][] = [
    ['fail state', 'system', { system: { fls_state: 1 } }],
    ['mirror', 'system', { system: { mirror: { state: 'unreachable', stream: 'hem-journal' } } }],
    ['key store', 'keystore', { keystore: { fls: 0x20 } }],
    ['personalised', 'identity', { identity: { inited: false } }],
    ['hostname', 'identity', { transport: { hostname: 'other.local' } }],
    ['storage', 'storage', { storage: { storage: ['1000:ro', '2000:-'] } }],
    ['upgrade', 'upgrade', { upgrade: { fw_upgrade: true } }],
  ]
  for (const [what, service, patch] of changes) {
    const before = cachedText(rendering, context(view, clock, request))
    const ctx = context({ ...view, [service]: device('P', patch)[service] }, clock, request)
    t.not(cachedText(rendering, ctx), before, `${what}: the very next request sees it`)
    check(`${what}: as rendered plainly`, ctx)
  }
  const withToken = { ...request, token: true }
  cachedText(rendering, context(view, clock, withToken))
  const repo = { ...view, keystore: { ...view.keystore, repo_stats: { ...view.keystore.repo_stats, total: 4 } } }
  t.match(cachedText(rendering, context(repo, clock, withToken)), /"repo_stats":\{"total":4,/, 'repo_stats too')
  t.match(cachedText(rendering, context(view, clock, request)), /"storage"/, 'P shows its storage')
  check('another variant, the same read models', context(view, clock, request, 'E'))
})

// hemctl against a server in the device's place, for what a real device says only in states a test
// cannot cheaply put it in (a journal mirror that stopped matching, an image refused without a reason,
// a service down) or that no device says at all (an empty answer): what hemctl prints and its exit status.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { MASTER_PASS } from './helpers/owner.js'
import { challenge, recordingDevice, type Answer, type Seen } from './helpers/recording-device.js'

/** hemctl in-process against a recording device whose answers `answer` gives by request. */
async function againstRecording(
  t: Parameters<typeof recordingDevice>[0] & { testdir(): string },
  answer: (request: Seen) => Answer,
) {
  const { seen, url } = await recordingDevice(t, answer)
  return { seen, hemctl: hemctlInProcess(['--url', url], t.testdir()) }
}

t.test(
  'status tells how far the mirror is behind, and a mirror that stopped matching as an error, with its detail',
  async (t) => {
    let mirror: Record<string, unknown> = { state: 'mirroring', stream: 'hem.audit.1' }
    const { hemctl } = await againstRecording(t, () => ({ status: 200, body: { fls_state: 0, mirror } }))
    t.match(await hemctl(['status']), { code: 0, stdout: 'fls_state: 0\nmirror: mirroring (hem.audit.1)\n' })
    mirror = { state: 'unreachable', stream: 'hem.audit.1', lag: { records: 3, oldest: 1_800_000_000 } }
    t.match(await hemctl(['status']), {
      code: 0,
      stdout: 'mirror: unreachable (hem.audit.1), 3 records behind, the oldest from 2027-01-15T08:00:00.000Z\n',
    })
    mirror = { state: 'mirroring', stream: 'hem.audit.1', lag: { records: 0 } }
    t.match(await hemctl(['status']), { code: 0, stdout: 'mirror: mirroring (hem.audit.1)\n' })
    mirror = { state: 'mismatch', stream: 'hem.audit.1' }
    const told = await hemctl(['status'])
    t.equal(told.code, 0, told.stderr)
    t.match(
      told.stdout,
      /^fls_state: 0\nmirror: ERROR: hem\.audit\.1 does not continue the journal \(no detail\); nothing/,
    )
    mirror = { ...mirror, detail: 'seq 7 differs' }
    t.match(
      (await hemctl(['status'])).stdout,
      /\(seq 7 differs\); nothing is mirrored until the next stream generation/,
    )
  },
)

t.test('an answer with nothing in it prints nothing, or null with --json; a bare value prints as it is', async (t) => {
  let answer: Answer = { status: 200 }
  const { hemctl } = await againstRecording(t, () => answer)
  t.match(await hemctl(['version']), { code: 0, stdout: '' })
  t.match(await hemctl(['version', '--json']), { code: 0, stdout: 'null\n' })
  answer = { status: 200, body: null }
  t.match(await hemctl(['version']), { code: 0, stdout: '' })
  answer = { status: 200, text: 'v1' }
  t.match(await hemctl(['version']), { code: 0, stdout: 'v1\n' })
})

t.test(
  'upgrade: a rejection without a message names its code, or the answer; other refusals are no rejection',
  async (t) => {
    let check: Answer = { status: 406, body: { error: 'rejected' } }
    const { seen, hemctl } = await againstRecording(t, ({ path }) =>
      path === '/api/system/upgrade/check_fw'
        ? check
        : { status: 200, body: path === '/api/system/status' ? { inited: false } : {} },
    )
    const image = join(t.testdir(), 'firmware.bin')
    await writeFile(image, Buffer.alloc(1000))
    t.match(await hemctl(['upgrade', 'fw', image]), {
      code: 1,
      stderr: /^hemctl upgrade fw: the device rejected the image: rejected\n$/m,
    })
    check = { status: 406 }
    t.match(await hemctl(['upgrade', 'fw', image]), {
      code: 1,
      stderr: /the device rejected the image: GET \/api\/system\/upgrade\/check_fw: the device answered 406\n$/,
    })
    check = { status: 409, body: { error: 'busy', message: 'another upload is running' } }
    const busy = await hemctl(['upgrade', 'fw', image])
    t.match(busy, { code: 1, stderr: /answered 409 \(another upload is running\)/ })
    t.notMatch(busy.stderr, /rejected the image/)
    t.notOk(
      seen.some((s) => s.path.startsWith('/api/system/upgrade/install')),
      'nothing was installed',
    )
  },
)

t.test('logs verify: a device that cannot serve its journal is a refusal, not a finding', async (t) => {
  const { hemctl } = await againstRecording(t, () => ({
    status: 503,
    body: { error: 'unavailable', message: 'bus down' },
  }))
  const answer = await hemctl(['logs', 'verify'])
  t.match(answer, {
    code: 1,
    stderr: /^hemctl logs verify: GET \/api\/auth\/token: the device answered 503 \(bus down\)\n$/,
  })
})

t.test('logs pull: a list the device cannot give now is a refusal, with the log key already saved', async (t) => {
  const b64 = (length: number) => Buffer.alloc(length, 1).toString('base64')
  const head = { file: '0000000a', seq: 1, head: b64(32), sig: b64(64) }
  const { hemctl } = await againstRecording(t, ({ method, path }) => {
    if (path === '/api/auth/token') return { status: 200, body: method === 'GET' ? challenge : { token: 't' } }
    if (path === '/api/logger/key') return { status: 200, body: { key: b64(32), head } }
    return { status: 503, body: { error: 'unavailable', message: 'bus down' } }
  })
  const out = join(t.testdir(), 'logs')
  const pulled = await hemctl(['logs', 'pull', '--out', out])
  t.match(pulled, {
    code: 1,
    stdout: '',
    stderr: /^hemctl logs pull: GET \/api\/logger\/list\/0: the device answered 503 \(bus down\)\n$/,
  })
  t.equal(await readFile(join(out, 'log-key.b64'), 'utf8'), `${b64(32)}\n`)
})

t.test('init: --gen-csr asks the device for a CSR; an empty passphrase file is refused', async (t) => {
  const { seen, hemctl } = await againstRecording(t, ({ method, path }) => {
    if (path === '/api/system/version') return { status: 200, body: { hwv: 'HEM-E', fwv: '1.0.0' } }
    if (method === 'GET') return { status: 200, body: challenge }
    return { status: 200, body: { instanceid: '0'.repeat(32), token: 'the init token' } }
  })
  const owner = ['init', '--user', 'Ada', '--email', 'ada@example.com']
  const empty = join(t.testdir(), 'empty')
  await writeFile(empty, '')
  t.match(await hemctl([...owner, '--passphrase-file', empty]), { code: 2, stderr: `hemctl init: ${empty} is empty\n` })
  t.notOk(
    seen.some((s) => s.method === 'POST'),
    'nothing was sent',
  )

  const made = await hemctl([...owner, '--gen-csr'], { env: { HEM_MASTER_PASSPHRASE: MASTER_PASS } })
  t.equal(made.code, 0, made.stderr)
  const init = seen.at(-1)!
  t.equal(init.path, '/api/auth/init')
  const claims = JSON.parse(Buffer.from(String(init.body.init).split('.')[1]!, 'base64url').toString()) as {
    cfg: Record<string, unknown>
  }
  t.match(claims.cfg, { user: 'Ada', gen_csr: true })
})

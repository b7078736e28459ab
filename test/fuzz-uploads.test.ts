// Property-based fuzzing of the upload streams: POST upload_fw (P, E) and upload_ui (P)
// get random bytes of every size around the 256 KiB bus chunk, honest and lying Content-Length
// (missing, chunked, not a number, over 16 MiB, longer than the body and then a half-close or a
// drop, shorter than the body), Expect: 100-continue (waited for or not), content types and
// Content-Disposition spellings, tokens of every kind, written at once or in pieces. Then the
// fresh device's own routes, which need no token: personalisation with a `cfg` one field off or
// broken, and (P) provisioning with a real factory answer one byte or field off.
//
// Properties: every whole request gets a well-formed answer that is no 5xx; an upload broken off
// never leaves the pipeline busy (a small upload right after is taken, at once or after a 409
// while the previous one winds down), nor do uploads at once; the device answers status after
// every run and is never put in a fail state; and at the end nothing was logged as an error and
// the journal verifies.
import 'reflect-metadata'
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { decodeBase64 } from '../protocol/base64.js'
import { signAttestation } from '../factory/sign-attestation.js'
import { buildEjwt } from '../client/ejwt-builder.js'
import type { Route } from '../gateway/types.js'
import { b64 } from './helpers/base64.js'
import {
  assertNone,
  check,
  finish,
  freshDevice,
  fuzzDevice,
  outcomeProblems,
  rightToken,
  routeKey,
  statusProblems,
  stopAndVerify,
  wrongToken,
  type Fresh,
  type FuzzDevice,
} from './helpers/fuzz-device.js'
import { bodyPlan, headerSafe, nastyString, renderBody, type BodyPlan } from './helpers/fuzz-inputs.js'
import { call } from './helpers/http.js'
import { api } from './helpers/keys.js'
import { defaultCfg, keys, MASTER_PASS, USER_PASS } from './helpers/owner.js'
import { rawExchange, requestHead, type Target } from './helpers/raw-http.js'
import { until } from './helpers/until.js'
import {
  expectPlan,
  frameUpload,
  lengthPlan,
  piecesPlan,
  seededBytes,
  uploadProblems,
  type BuiltUpload,
  type Framing,
  type Length,
} from './helpers/upload-framing.js'

const SEED = 7_2029
const RUNS = { upload: 90, concurrent: 20, init: 60, provisioning: 90, initP: 25 }

const UPLOAD_CHUNK = 256 * 1024
const FILENAME = { fw: 'firmware.bin', ui: 'webroot.tar' } as const

// ---- uploads ---------------------------------------------------------------------------------

type UploadAuth = 'right' | 'none' | 'garbage' | 'wrong' | 'expired' | 'master'

interface UploadPlan {
  /** Bytes sent (before `more`/`less`); the content comes from `seed`. */
  size: number
  seed: number
  length: Length
  type: string | undefined
  disposition: string | undefined
  expect: Framing['expect']
  auth: UploadAuth
  pieces: number
  transport: number
}

const uploadPlan = (filenames: readonly string[]): fc.Arbitrary<UploadPlan> =>
  fc.record({
    size: fc.oneof(
      { arbitrary: fc.integer({ min: 1, max: 4096 }), weight: 4 },
      { arbitrary: fc.constantFrom(UPLOAD_CHUNK - 1, UPLOAD_CHUNK, UPLOAD_CHUNK + 1, 2 * UPLOAD_CHUNK), weight: 1 },
      { arbitrary: fc.integer({ min: 4096, max: 3 * UPLOAD_CHUNK }), weight: 1 },
      { arbitrary: fc.constant(0), weight: 1 },
    ),
    seed: fc.nat(),
    length: lengthPlan('16777217'),
    type: fc.oneof(
      { arbitrary: fc.constant('application/octet-stream'), weight: 6 },
      {
        arbitrary: fc.constantFrom(
          undefined,
          '',
          'APPLICATION/OCTET-STREAM',
          'application/octet-stream; charset=binary',
          'application/json',
          'multipart/form-data; boundary=x',
          'application/octet-streamx',
        ),
        weight: 1,
      },
      { arbitrary: nastyString, weight: 1 },
    ),
    disposition: fc.oneof(
      { arbitrary: fc.constantFrom(...filenames.map((name) => `attachment; filename="${name}"`)), weight: 6 },
      {
        arbitrary: fc.constantFrom(
          undefined,
          '',
          'attachment',
          ...filenames.flatMap((name) => [
            `attachment; filename=${name}`,
            `inline; filename="${name}"`,
            `ATTACHMENT; FILENAME="${name}"`,
            `attachment;filename="${name}";size=1`,
            `attachment; filename="../${name}"`,
            `attachment; filename="${name}\\"`,
            `attachment; filename*=UTF-8''${name}`,
          ]),
          'attachment; filename="firmware.bin"; filename="webroot.tar"',
          'attachment; filename="ui.bin"',
          'attachment; filename=""',
          'attachment; filename="',
        ),
        weight: 3,
      },
      { arbitrary: nastyString, weight: 1 },
    ),
    expect: expectPlan,
    auth: fc.oneof(
      { arbitrary: fc.constant('right' as const), weight: 6 },
      {
        arbitrary: fc.constantFrom(
          'none' as const,
          'garbage' as const,
          'wrong' as const,
          'expired' as const,
          'master' as const,
        ),
        weight: 2,
      },
    ),
    pieces: piecesPlan,
    transport: fc.nat(9),
  })

function uploadToken(fd: FuzzDevice, route: Route, auth: UploadAuth): string | undefined {
  return {
    right: rightToken(fd, route),
    none: undefined,
    garbage: 'Zm9v.YmFy.YmF6',
    wrong: wrongToken(fd, route),
    expired: fd.expired,
    master: fd.master,
  }[auth]
}

function buildUpload(fd: FuzzDevice, route: Route, p: UploadPlan): BuiltUpload {
  const token = uploadToken(fd, route, p.auth)
  const headers: [string, string][] = []
  if (token !== undefined) headers.push(['Authorization', `Bearer ${token}`])
  if (p.type !== undefined) headers.push(['Content-Type', headerSafe(p.type)])
  if (p.disposition !== undefined) headers.push(['Content-Disposition', headerSafe(p.disposition)])
  return frameUpload(route.path, headers, seededBytes(p.size, p.seed), p)
}

/**
 * The pipeline takes a small upload once the run is over: a run that broke off must not leave it
 * busy. A 409 is fine for a moment (an abort or a check still winding down), not for long.
 */
async function pipelineProblems(fd: FuzzDevice, route: Route): Promise<string[]> {
  const kind = route.path.endsWith('_ui') ? 'ui' : 'fw'
  const body = Buffer.from('not an image')
  const request = Buffer.concat([
    requestHead('POST', route.path, [
      ['Authorization', `Bearer ${rightToken(fd, route)}`],
      ['Content-Type', 'application/octet-stream'],
      ['Content-Disposition', `attachment; filename="${FILENAME[kind]}"`],
      ['Content-Length', String(body.length)],
    ]),
    body,
  ])
  let last: number | undefined
  for (let attempt = 0; attempt < 40; attempt++) {
    last = (await rawExchange(fd.http, { steps: [request] })).responses[0]?.status
    if (last === 200) return []
    if (last !== 409) break
    await sleep(50)
  }
  return [`the ${kind} pipeline did not take a small upload after the run: ${last ?? 'no answer'}`]
}

/**
 * The upgrade pipelines' uploads, whose device is personalised here. The restore's upload takes a file on a fresh
 * device only (test/backup-refusals.test.ts): on this one it is refused whatever is sent.
 */
function isUpgradeUpload(route: Route): boolean {
  return route.handler.kind === 'upload' && route.handler.service === 'upgrade'
}

async function fuzzUploads(fd: FuzzDevice, route: Route, index: number): Promise<void> {
  const filenames = route.handler.kind === 'upload' ? route.handler.filenames : []
  await check(
    fc.asyncProperty(uploadPlan(filenames), fc.boolean(), async (p, checkAfter) => {
      const secure = p.transport < 3
      const built = buildUpload(fd, route, p)
      const target: Target = secure ? fd.https : fd.http
      const outcome = await rawExchange(target, built.plan)
      const problems = uploadProblems(built, outcome)
      const [first] = outcome.responses
      // A staged upload is checked now and then: the check of random bytes runs and rejects them.
      if (checkAfter && first?.status === 200) {
        const checked = await api(`${fd.owner.base}${route.path.replace('upload', 'check')}`, rightToken(fd, route))
        if (checked.status >= 500) problems.push(`check answered ${checked.status} ${checked.text}`)
      }
      problems.push(...(await pipelineProblems(fd, route)), ...(await statusProblems(fd)))
      assertNone(problems, built.head)
    }),
    SEED + index,
    RUNS.upload,
  )
}

/** Uploads at once, to one pipeline or both: each is answered (many with a 409), and none leaves a pipeline busy. */
async function fuzzConcurrentUploads(fd: FuzzDevice): Promise<void> {
  const routes = fd.routes.filter(isUpgradeUpload)
  const plans = fc.array(fc.tuple(fc.nat(routes.length - 1), uploadPlan(['firmware.bin', 'webroot.tar'])), {
    minLength: 2,
    maxLength: 4,
  })
  await check(
    fc.asyncProperty(plans, async (batch) => {
      const results = await Promise.all(
        batch.map(async ([i, p]) => {
          const built = buildUpload(fd, routes[i]!, p)
          return { built, outcome: await rawExchange(p.transport < 3 ? fd.https : fd.http, built.plan) }
        }),
      )
      for (const { built, outcome } of results) assertNone(uploadProblems(built, outcome), built.head)
      for (const route of routes) assertNone(await pipelineProblems(fd, route), `${route.path} after the batch`)
      assertNone(await statusProblems(fd), 'GET /api/system/status after the batch')
    }),
    SEED,
    RUNS.concurrent,
  )
}

// ---- the fresh device's routes ----------------------------------------------------------------

/** Personalisation broken in its `cfg`, in the claims around it, or in the body around the eJWT. */
type InitPlan =
  { kind: 'cfg'; cfg: BodyPlan } | { kind: 'claim'; claim: string; value: string } | { kind: 'body'; body: BodyPlan }

/** The fields a `cfg` may have (device contract §2.1). */
const CFG_FIELDS = [
  'user',
  'masterkey',
  'userkey',
  'hostname',
  'origin',
  'trusted_ts',
  'trusted_backend',
  'allow_keysearch',
  'email',
  'ctx',
  'gen_csr',
]
const CFG_FIELDS_P = ['ip', 'storage_mode', 'storage_disk0size', 'dnsd']

const initPlan = (variant: 'P' | 'E'): fc.Arbitrary<InitPlan> =>
  fc.oneof(
    {
      arbitrary: fc.record({
        kind: fc.constant('cfg' as const),
        cfg: bodyPlan([...CFG_FIELDS, ...(variant === 'P' ? CFG_FIELDS_P : [])]),
      }),
      weight: 5,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('claim' as const),
        claim: fc.constantFrom('jti', 'aud', 'exp', 'iat', 'iss'),
        value: fc.constantFrom(
          'null',
          '"x"',
          '1e400',
          '[]',
          '{}',
          '-1',
          '"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="',
        ),
      }),
      weight: 1,
    },
    { arbitrary: fc.record({ kind: fc.constant('body' as const), body: bodyPlan(['init']) }), weight: 1 },
  )

const MARK = '\u0001cfg\u0001'

/**
 * A fresh challenge, a cfg by the plan, the claims written as JSON text (so that any cfg text fits), signed by the
 * master key.
 */
async function initBody(base: string, variant: 'P' | 'E', plan: InitPlan): Promise<Buffer> {
  const challenge = (await call(`${base}/api/auth/init`)).json as { jti: string; spk: string; eid: string; exp: number }
  const user = await keys.get(USER_PASS, challenge.eid)
  const master = await keys.get(MASTER_PASS, challenge.eid)
  const cfg = defaultCfg(variant, user, master)
  const cfgText = plan.kind === 'cfg' ? renderBody(plan.cfg, [cfg]).toString('utf8') : JSON.stringify(cfg)
  const claims: Record<string, unknown> = {
    jti: challenge.jti,
    aud: challenge.spk,
    exp: challenge.exp,
    iat: Math.floor(Date.now() / 1000),
    iss: b64(master.publicKey),
    cfg: MARK,
  }
  let payload = JSON.stringify(claims).replace(JSON.stringify(MARK), cfgText)
  if (plan.kind === 'claim')
    payload = payload.replace(new RegExp(`"${plan.claim}":("[^"]*"|[^,}]*)`), `"${plan.claim}":${plan.value}`)
  const init = buildEjwt({ seed: master.seed, spk: challenge.spk, payloadJson: payload })
  return plan.kind === 'body' ? renderBody(plan.body, [{ init }]) : Buffer.from(JSON.stringify({ init }))
}

/** One POST with a JSON body on a new connection: the answer, and what is wrong with it. */
async function post(
  target: Target,
  path: string,
  body: Buffer,
): Promise<{ request: Buffer; status: number | undefined; text: string; problems: string[] }> {
  const request = Buffer.concat([
    requestHead('POST', path, [
      ['Content-Type', 'application/json'],
      ['Content-Length', String(body.length)],
    ]),
    body,
  ])
  const outcome = await rawExchange(target, { steps: [request] })
  const first = outcome.responses[0]
  return { request, status: first?.status, text: first?.body.toString() ?? '', problems: outcomeProblems(outcome) }
}

/** Personalisation with broken bodies; a run that personalises after all is wiped back to fresh for the next. */
async function fuzzInit(fresh: Fresh, variant: 'P' | 'E', runs: number): Promise<void> {
  await check(
    fc.asyncProperty(initPlan(variant), async (plan) => {
      const { request, status, text, problems } = await post(
        fresh.http,
        '/api/auth/init',
        await initBody(fresh.base, variant, plan),
      )
      if (status === 200) {
        const wiped = await api(`${fresh.base}/api/system/config`, (JSON.parse(text) as { token: string }).token, {
          wipeout: true,
        })
        if (wiped.status !== 200) problems.push(`the wipeout after a personalisation answered ${wiped.status}`)
        await until('fresh again', async () => (await call(`${fresh.base}/api/auth/init`)).status === 200, 20_000)
      }
      assertNone([...problems, ...(await statusProblems(fresh))], request)
    }),
    SEED,
    runs,
  )
}

/** Whether a body is a JSON object whose `crt` and `genuine` decode (as the device decodes them) to these. */
function sameProvisioning(body: Buffer, record: { crt: Uint8Array; genuine: Uint8Array }): boolean {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return false
  }
  const { crt, genuine } = (parsed ?? {}) as { crt?: unknown; genuine?: unknown }
  const same = (text: unknown, bytes: Uint8Array) =>
    typeof text === 'string' && Buffer.from(decodeBase64(text) ?? []).equals(Buffer.from(bytes))
  return same(crt, record.crt) && same(genuine, record.genuine)
}

/** The development factory CA (deploy/keys), which the simulated enclave trusts. */
const devCa = {
  key: createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url), 'utf8')),
  cert: new Uint8Array(
    new X509Certificate(readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url))).raw,
  ),
}

// ---- the tests -------------------------------------------------------------------------------

const devices = { P: fuzzDevice(t, 'P', { scopes: ['logger:get'] }), E: fuzzDevice(t, 'E', { scopes: ['logger:get'] }) }

for (const variant of ['P', 'E'] as const) {
  t.test(`uploads on ${variant}`, async (t) => {
    const fd = await devices[variant]
    for (const [index, route] of fd.routes.entries()) {
      if (!isUpgradeUpload(route)) continue
      await t.test(routeKey(route), () => fuzzUploads(fd, route, index))
    }
    await t.test('uploads at once', () => fuzzConcurrentUploads(fd))
    await finish(t, fd)
  })
}

t.test('a fresh E device: personalisation', async (t) => {
  const fresh = await freshDevice(t, 'E')
  await fuzzInit(fresh, 'E', RUNS.init)
  await stopAndVerify(t, fresh.device, fresh.errors)
})

t.test('a fresh P device: provisioning, then personalisation', async (t) => {
  const fresh = await freshDevice(t, 'P')
  const request = (await call(`${fresh.base}/api/system/config/attestation`)).json as { csr: string; genuine: string }
  const signed = await signAttestation(
    { csr: decodeBase64(request.csr)!, genuine: decodeBase64(request.genuine)! },
    devCa,
  )
  const valid = { crt: b64(signed.crt), genuine: b64(signed.genuine) }
  await check(
    fc.asyncProperty(bodyPlan(['crt', 'genuine']), async (plan) => {
      const body = renderBody(plan, [valid])
      // The factory's answer, in any spelling, provisions the enclave for good: it is sent once, after the runs.
      if (sameProvisioning(body, signed)) return
      const { request, problems } = await post(fresh.http, '/api/system/config/provisioning', body)
      assertNone([...problems, ...(await statusProblems(fresh))], request)
    }),
    SEED,
    RUNS.provisioning,
  )
  const provisioned = await post(fresh.http, '/api/system/config/provisioning', Buffer.from(JSON.stringify(valid)))
  t.equal(provisioned.status, 200, 'the factory answer the runs broke is a valid one', { answer: provisioned.text })
  await fuzzInit(fresh, 'P', RUNS.initP)
  await stopAndVerify(t, fresh.device, fresh.errors)
})

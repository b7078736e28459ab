// Property-based fuzzing of the restore's upload on a fresh device (docs/backup.md): a valid backup file cut short
// (to nothing), a byte flipped in its header or anywhere, a wrong magic, a header field set to an extreme (lengths
// that run past the end or are huge, scrypt parameters on and past the cap, another version), bytes appended, random
// bytes, a file past the 8 MiB cap; framed honestly or not (test/helpers/upload-framing.ts), of any content type,
// over HTTPS or plain HTTP, whole or broken off. After each, POST /api/system/restore with the passphrase or another.
//
// Properties: every whole request gets a well-formed answer that is no 5xx (an upload with the right headers: 200, 400
// empty, 413 past the cap; over HTTP 418); the restore is a 406 (bad_backup or unsupported_backup) of whatever garbage
// is staged, a 409 nothing_staged while nothing ever was, a 400 for a passphrase past its limit, and a 429 with
// Retry-After exactly when the pace of failed restores says so (three free in a boot, then one per 30 s by the
// device's clock, which the runs move on instead of waiting); the device stays fresh and answers status. At the end
// a valid backup still uploads and restores (nothing stuck), the device logged no error, and its journal verifies.
import fc from 'fast-check'
import t from 'tap'
import { RESTORE_FREE_ATTEMPTS, RESTORE_PACE_MS } from '../actors/keystore/restore-stage.js'
import { BACKUP_MAGIC, MAX_BACKUP_BYTES } from '../protocol/index.js'
import { BACKUP_PASS, madeBackup, restoreWith, uploadBackup } from './helpers/backup.js'
import { skippingClock } from './helpers/clock.js'
import { assertNone, check, freshDevice, statusProblems, stopAndVerify, type Fresh } from './helpers/fuzz-device.js'
import { headerSafe, nastyString } from './helpers/fuzz-inputs.js'
import { call } from './helpers/http.js'
import { header, rawExchange, requestHead, type RawResponse } from './helpers/raw-http.js'
import { frameUpload, framingPlan, seededBytes, uploadProblems, type Framing } from './helpers/upload-framing.js'

const SEED = 40_2026
const RUNS = 100
const PATH = '/api/system/restore/upload'
const TYPE = 'application/octet-stream'
const DISPOSITION = 'attachment; filename="backup.hembackup"'

/** The header fields a file declares, by name: their offset in a valid file and their width in bytes. */
type FieldName = 'version' | 'kdf' | 'log2N' | 'r' | 'p' | 'saltLength' | 'fileIdLength' | 'keyCount' | 'ctLength'

/** How a valid file is made garbage. */
type FilePlan =
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; inHeader: boolean; at: number; bit: number }
  | { kind: 'magic'; seed: number }
  | { kind: 'field'; field: FieldName; value: number }
  | { kind: 'append'; size: number; seed: number }
  | { kind: 'random'; size: number; seed: number; magic: boolean }
  | { kind: 'oversized'; by: number }

interface RunPlan {
  file: FilePlan
  framing: Framing
  type: string | undefined
  disposition: string | undefined
  https: boolean
  /** The passphrase of the restore after the upload. */
  passphrase: 'right' | 'wrong' | 'empty' | 'long'
  /** Move the device's clock past the pace before the restore. */
  later: boolean
}

const FIELDS: FieldName[] = ['version', 'kdf', 'log2N', 'r', 'p', 'saltLength', 'fileIdLength', 'keyCount', 'ctLength']
const EXTREMES = [0, 1, 2, 3, 9, 13, 14, 15, 16, 18, 22, 31, 64, 255, 256, 0x7fff, 0xffff, 0x7fffffff, 0xffffffff]

const filePlan: fc.Arbitrary<FilePlan> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('flip' as const),
      inHeader: fc.boolean(),
      at: fc.nat(),
      bit: fc.nat(7),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('magic' as const), seed: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('field' as const),
      field: fc.constantFrom(...FIELDS),
      value: fc.constantFrom(...EXTREMES),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      size: fc.integer({ min: 1, max: 64 }),
      seed: fc.nat(),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('random' as const),
      size: fc.integer({ min: 1, max: 4096 }),
      seed: fc.nat(),
      magic: fc.boolean(),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('oversized' as const), by: fc.integer({ min: 1, max: 4096 }) }),
    weight: 1,
  },
)

const runPlan: fc.Arbitrary<RunPlan> = fc.record({
  file: filePlan,
  framing: framingPlan(String(MAX_BACKUP_BYTES + 1)),
  type: fc.oneof(
    { arbitrary: fc.constant(TYPE), weight: 6 },
    {
      arbitrary: fc.constantFrom(undefined, '', 'APPLICATION/OCTET-STREAM', 'application/json', 'text/plain; x=y'),
      weight: 1,
    },
    { arbitrary: nastyString, weight: 1 },
  ),
  disposition: fc.oneof(
    { arbitrary: fc.constant(DISPOSITION), weight: 6 },
    {
      arbitrary: fc.constantFrom(undefined, '', 'attachment', 'attachment; filename="firmware.bin"'),
      weight: 1,
    },
    { arbitrary: nastyString, weight: 1 },
  ),
  https: fc.oneof({ arbitrary: fc.constant(true), weight: 6 }, { arbitrary: fc.constant(false), weight: 1 }),
  passphrase: fc.constantFrom('right' as const, 'right' as const, 'wrong' as const, 'empty' as const, 'long' as const),
  later: fc.boolean(),
})

/** The first run, before anything is staged: an empty upload (400), so the restore finds nothing (409). */
const NOTHING_STAGED: RunPlan = {
  file: { kind: 'truncate', at: 0 },
  framing: { length: { kind: 'exact' }, expect: 'no', pieces: 1 },
  type: TYPE,
  disposition: DISPOSITION,
  https: true,
  passphrase: 'right',
  later: false,
}

/** Where each field of a valid file is (docs/backup.md, the file): the salt and head file id lengths it declares. */
function fieldsOf(file: Uint8Array): Record<FieldName, { at: number; width: number }> {
  const saltLength = file[18]!
  const fileIdAt = 19 + saltLength + 12 + 8 + 32
  const keyCountAt = fileIdAt + 1 + file[fileIdAt]! + 4 + 32 + 8
  return {
    version: { at: 10, width: 2 },
    kdf: { at: 12, width: 1 },
    log2N: { at: 13, width: 1 },
    r: { at: 14, width: 2 },
    p: { at: 16, width: 2 },
    saltLength: { at: 18, width: 1 },
    fileIdLength: { at: fileIdAt, width: 1 },
    keyCount: { at: keyCountAt, width: 4 },
    ctLength: { at: keyCountAt + 4, width: 4 },
  }
}

/** The garbage a plan makes of a valid file: never the file itself. */
function garbage(valid: Uint8Array, plan: FilePlan): Buffer {
  const file = Buffer.from(valid)
  const fields = fieldsOf(valid)
  const headerEnd = fields.ctLength.at + 4
  let made: Buffer
  switch (plan.kind) {
    case 'truncate':
      made = file.subarray(0, plan.at % file.length)
      break
    case 'flip':
      made = file
      made[plan.at % (plan.inHeader ? headerEnd : file.length)]! ^= 1 << plan.bit
      break
    case 'magic':
      made = Buffer.concat([seededBytes(BACKUP_MAGIC.length, plan.seed), file.subarray(BACKUP_MAGIC.length)])
      break
    case 'field': {
      const { at, width } = fields[plan.field]
      made = file
      made.writeUIntBE(plan.value % 2 ** (8 * width), at, width)
      break
    }
    case 'append':
      made = Buffer.concat([file, seededBytes(plan.size, plan.seed)])
      break
    case 'random':
      made = seededBytes(plan.size, plan.seed)
      if (plan.magic) made.set(BACKUP_MAGIC.subarray(0, Math.min(made.length, BACKUP_MAGIC.length)))
      break
    case 'oversized':
      made = Buffer.concat([file, Buffer.alloc(MAX_BACKUP_BYTES - file.length + plan.by)])
      break
  }
  if (made.equals(valid)) made[made.length - 1]! ^= 1
  return made
}

/** The status a whole upload must get, where the plan decides it: undefined where its headers are odd. */
function uploadStatus(plan: RunPlan, size: number): number | undefined {
  if (plan.framing.length.kind !== 'exact') return undefined
  if (!plan.https) return 418
  if (plan.type !== TYPE || plan.disposition !== DISPOSITION) return undefined
  if (size === 0) return 400
  return size > MAX_BACKUP_BYTES ? 413 : 200
}

/** What the device's failed restores allow, as its answers said: the pace of docs/backup.md. */
class PaceModel {
  #failures = 0
  #last = 0

  constructor(private readonly now: () => number) {}

  /** True: paced for certain; false: not paced for certain; undefined: at the edge, either. */
  paced(): boolean | undefined {
    if (this.#failures < RESTORE_FREE_ATTEMPTS) return false
    const since = this.now() - this.#last
    // The device noted its failure a moment before this model did: only a clear margin decides.
    if (since < RESTORE_PACE_MS - 5_000) return true
    return since >= RESTORE_PACE_MS ? false : undefined
  }

  failed(): void {
    this.#failures += 1
    this.#last = this.now()
  }
}

interface Expected {
  staged: boolean
  pace: PaceModel
}

/** What is wrong with the restore's answer after a run. */
function restoreProblems(answer: RawResponse | undefined, plan: RunPlan, expected: Expected): string[] {
  if (!answer) return ['the restore got no answer']
  const code = (JSON.parse(answer.body.toString() || '{}') as { error?: string }).error
  const got = `${answer.status} ${code}`
  if (plan.passphrase === 'long') return answer.status === 400 ? [] : [`a passphrase too long: ${got}, not 400`]
  if (!expected.staged) return got === '409 nothing_staged' ? [] : [`nothing staged: ${got}, not 409 nothing_staged`]
  const paced = expected.pace.paced()
  if (answer.status === 429) {
    if (paced === false) return [`paced (429) where the pace allows a restore`]
    return Number(header(answer, 'retry-after')) > 0 ? [] : ['a 429 without Retry-After']
  }
  if (paced === true) return [`not paced where it must be: ${got}`]
  if (code === 'bad_backup' && answer.status === 406) expected.pace.failed()
  return answer.status === 406 && ['bad_backup', 'unsupported_backup'].includes(code ?? '')
    ? []
    : [`garbage staged: ${got}, not 406 bad_backup or unsupported_backup`]
}

function restoreRequest(plan: RunPlan): Buffer {
  const passphrase = { right: BACKUP_PASS, wrong: 'not the backup passphrase', empty: '', long: 'x'.repeat(4097) }
  const body = Buffer.from(JSON.stringify({ passphrase: passphrase[plan.passphrase] }))
  const head = requestHead('POST', '/api/system/restore', [
    ['Content-Type', 'application/json'],
    ['Content-Length', String(body.length)],
  ])
  return Buffer.concat([head, body])
}

async function stillFresh(fresh: Fresh): Promise<string[]> {
  const inited = (await call(`${fresh.base}/api/system/status`)).json?.inited
  return [...(await statusProblems(fresh)), ...(inited === false ? [] : [`status inited: ${inited}`])]
}

t.test('the restore upload of a fresh device, fuzzed; a valid backup restores after', async (t) => {
  const clock = skippingClock()
  const fresh = await freshDevice(t, 'E', clock)
  const valid = await madeBackup('E')
  const expected: Expected = { staged: false, pace: new PaceModel(() => clock.now()) }
  const statuses = new Map<string, number>()
  await check(
    fc.asyncProperty(runPlan, async (plan) => {
      const headers: [string, string][] = []
      if (plan.type !== undefined) headers.push(['Content-Type', headerSafe(plan.type)])
      if (plan.disposition !== undefined) headers.push(['Content-Disposition', headerSafe(plan.disposition)])
      const file = garbage(valid, plan.file)
      const built = frameUpload(PATH, headers, file, plan.framing)
      const outcome = await rawExchange(plan.https ? fresh.https : fresh.http, built.plan)
      const problems = uploadProblems(built, outcome)
      const upload = outcome.responses[0]?.status
      const must = uploadStatus(plan, file.length)
      if (must !== undefined && upload !== must) problems.push(`the upload answered ${upload}, not ${must}`)
      if (upload === 200) expected.staged = true
      if (plan.later) clock.advance(RESTORE_PACE_MS)
      const restore = (await rawExchange(fresh.https, { steps: [restoreRequest(plan)] })).responses[0]
      problems.push(...restoreProblems(restore, plan, expected), ...(await stillFresh(fresh)))
      const seen = `upload ${upload ?? '-'}, restore ${restore?.status ?? '-'}`
      statuses.set(seen, (statuses.get(seen) ?? 0) + 1)
      assertNone(problems, `${JSON.stringify(plan.file)} ${plan.passphrase}\n${built.head.toString('latin1')}`)
    }),
    SEED,
    RUNS,
    [[NOTHING_STAGED]],
  )
  t.comment([...statuses].map(([seen, n]) => `${n} × ${seen}`).join('; '))
  t.ok(expected.staged, 'some garbage was staged and refused')

  clock.advance(RESTORE_PACE_MS)
  t.equal((await uploadBackup(fresh.device.httpsUrl!, valid)).status, 200, 'a valid backup uploads after the runs')
  const restored = await restoreWith(fresh.device.httpsUrl!)
  t.equal(restored.status, 200, `and restores: ${restored.text}`)
  t.notOk('inited' in (await call(`${fresh.base}/api/system/status`)).json, 'the device is personalised')
  await stopAndVerify(t, fresh.device, fresh.errors)
})

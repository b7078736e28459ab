import { buildLoginEjwt, derivePassphraseKeyAsync, type PassphraseKey, type TokenChallenge } from '../client/index.js'
import { BENCH_PASSPHRASES, type HemdTarget } from './hemd-target.js'
import { TimingError } from './timing-error.js'

/** The brake's states the bench times: its answer times, in ms. */
export interface BrakeSample {
  /** A login after a success (no failure counted). */
  afterNoFailure: number
  /** A wrong guess after three failures in a row. */
  afterThreeFailures: number
  /** Four wrong guesses sent at once after one failure, to the last answer. */
  fourParallelGuesses: number
}

const SCOPE = 'system:config'
const LIFETIME_S = 60

/**
 * Times the login brake's states through `POST /api/auth/token` (each answer from the POST to
 * its answer, the challenge fetched before): a success after no failure, a wrong guess after
 * three failures in a row, and four parallel wrong guesses after one failure (checked at the
 * device's pace: the attempts before spent its three quick checks, so one per 1.5 s, about 6 s
 * for the four). The owner logs in last, which resets the brake.
 */
export async function measureLoginBrake(hemd: HemdTarget): Promise<BrakeSample> {
  const { client } = hemd
  const eid = (await challenge(hemd)).eid
  const [owner, wrong] = await Promise.all([
    derivePassphraseKeyAsync(BENCH_PASSPHRASES.user, eid),
    derivePassphraseKeyAsync('not the bench passphrase', eid),
  ])
  const attempt = async (key: PassphraseKey, expected: 200 | 401) => {
    const auth = buildLoginEjwt(key, await challenge(hemd), SCOPE, LIFETIME_S)
    const sent = performance.now()
    const { status } = await client.transport.request('POST', '/api/auth/token', { json: { auth } })
    const ms = performance.now() - sent
    if (status !== expected) throw new TimingError(`a login answered ${status}, not ${expected}`)
    return ms
  }
  // Whatever came before, the brake starts from no failure.
  await attempt(owner, 200)
  const afterNoFailure = await attempt(owner, 200)
  for (let i = 0; i < 3; i++) await attempt(wrong, 401)
  const afterThreeFailures = await attempt(wrong, 401)
  await attempt(owner, 200)
  await attempt(wrong, 401)
  const auths = await Promise.all(
    [1, 2, 3, 4].map(async () => buildLoginEjwt(wrong, await challenge(hemd), SCOPE, LIFETIME_S)),
  )
  const started = performance.now()
  const statuses = await Promise.all(
    auths.map(async (auth) => (await client.transport.request('POST', '/api/auth/token', { json: { auth } })).status),
  )
  const fourParallelGuesses = performance.now() - started
  if (statuses.some((s) => s !== 401)) throw new TimingError(`parallel wrong guesses answered ${statuses.join(', ')}`)
  await attempt(owner, 200)
  return { afterNoFailure, afterThreeFailures, fourParallelGuesses }
}

function challenge(hemd: HemdTarget): Promise<TokenChallenge> {
  return hemd.client.json<TokenChallenge>('GET', '/api/auth/token')
}

import { request } from 'node:https'
import { EjwtError, parseEjwt } from '../actors/auth/index.js'
import { buildLoginEjwt, derivePassphraseKeyAsync, type TokenChallenge } from '../client/index.js'
import { BENCH_PASSPHRASES, type HemdTarget } from './hemd-target.js'
import { TimingError } from './timing-error.js'

/** The login body of the old test: 10 MB. */
const HUGE_CHARACTERS = 10_000_000

export interface OversizedEjwtSample {
  /** The auth actor's parse refusing the 10 MB eJWT, in process, in ms. */
  parseMs: number
  /** `POST /api/auth/token` with it, to the gateway's 413 (the body limit answers, after draining the body). */
  httpMs: number
}

/**
 * The refusal of a login eJWT that is valid (the owner's key, a fresh challenge) but for its
 * MAC part padded to 10 MB. Over HTTP the gateway's body limit refuses it before auth sees it,
 * so the auth actor's step, `parseEjwt`, is timed here in process as well: it must refuse by
 * the length alone, before decoding anything.
 */
export async function measureOversizedEjwtRefusal(hemd: HemdTarget): Promise<OversizedEjwtSample> {
  const challenge = await hemd.client.json<TokenChallenge>('GET', '/api/auth/token')
  const key = await derivePassphraseKeyAsync(BENCH_PASSPHRASES.user, challenge.eid)
  const huge = buildLoginEjwt(key, challenge, 'system:config', 60).padEnd(HUGE_CHARACTERS, 'A')
  const started = performance.now()
  try {
    parseEjwt(huge)
  } catch (error) {
    const parseMs = performance.now() - started
    if (!(error instanceof EjwtError && error.code === 'malformed')) throw error
    return { parseMs, httpMs: await postedRefusal(hemd.httpsUrl, JSON.stringify({ auth: huge })) }
  }
  throw new TimingError('parseEjwt took a 10 MB eJWT')
}

/** From sending the login body to its 413. */
function postedRefusal(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request(
      `${url}/api/auth/token`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
        rejectUnauthorized: false,
        servername: 'localhost',
      },
      (res) => {
        const ms = performance.now() - started
        res.resume().on('end', () => {
          if (res.statusCode === 413) resolve(ms)
          else reject(new TimingError(`the 10 MB login body was answered ${res.statusCode}, not 413`))
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

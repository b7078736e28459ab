import {
  type CryptoEngine,
  type EntropyFailure,
  postQuantum,
  runKats,
  runPostQuantumKats,
  type TestedEntropySource,
} from '../../hal/index.js'
import { createHash, createHmac, createPrivateKey, createPublicKey, diffieHellman, sign } from 'node:crypto'

export interface SelfTestResult {
  /**
   * Names of the known-answer tests that failed, `platform:` (node:crypto as the journal and auth use it) or the
   * engine's.
   */
  failedKats: string[]
  /** Why the entropy source failed its health tests, on a fresh sample or before. */
  entropy: EntropyFailure | undefined
}

/** A fresh sample as large as the start-up test's (SP 800-90B §4.3). */
const SELF_TEST_SAMPLES = 1024

const hex = (text: string) => Buffer.from(text, 'hex')

/** Known-answer tests of the node:crypto primitives outside the engine: the journal's, the tokens', login's. */
const kats: Record<string, () => boolean> = {
  // FIPS 180-4 example "abc".
  sha256: () =>
    createHash('sha256').update('abc').digest('hex') ===
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  // RFC 4231 test case 2.
  'hmac-sha256': () =>
    createHmac('sha256', 'Jefe').update('what do ya want for nothing?').digest('hex') ===
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  // RFC 8032 §7.1 test 1.
  ed25519: () => {
    const key = createPrivateKey({
      key: Buffer.concat([
        hex('302e020100300506032b657004220420'),
        hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'),
      ]),
      format: 'der',
      type: 'pkcs8',
    })
    return (
      sign(null, Buffer.alloc(0), key).toString('hex') ===
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155' +
        '5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'
    )
  },
  // RFC 7748 §6.1.
  x25519: () => {
    const alice = createPrivateKey({
      key: Buffer.concat([
        hex('302e020100300506032b656e04220420'),
        hex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'),
      ]),
      format: 'der',
      type: 'pkcs8',
    })
    const bob = createPublicKey({
      key: Buffer.concat([
        hex('302a300506032b656e032100'),
        hex('de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f'),
      ]),
      format: 'der',
      type: 'spki',
    })
    return (
      diffieHellman({ privateKey: alice, publicKey: bob }).toString('hex') ===
      '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742'
    )
  },
}

export function runSelfTest(engine: CryptoEngine, entropy: TestedEntropySource): SelfTestResult {
  const failedKats = [
    ...Object.entries(kats)
      .filter(([, kat]) => {
        try {
          return !kat()
        } catch {
          return true
        }
      })
      .map(([name]) => `platform:${name}`),
    ...runKats(engine).failed.map((name) => `${engine.name}:${name}`),
    ...runPostQuantumKats(postQuantum).failed.map((name) => `post-quantum:${name}`),
  ]
  if (!entropy.failure) {
    try {
      entropy.read(SELF_TEST_SAMPLES).fill(0)
    } catch {
      // latched in entropy.failure
    }
  }
  return { failedKats, entropy: entropy.failure }
}

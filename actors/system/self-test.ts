import { createCipheriv, createHash, createHmac, createPrivateKey, createPublicKey, diffieHellman, sign } from 'node:crypto'

export interface SelfTestResult {
  /** Names of the known-answer tests that failed. */
  failedKats: string[]
  /** False when the entropy source repeated itself beyond the health-test cutoff. */
  entropyOk: boolean
}

const hex = (text: string) => Buffer.from(text, 'hex')

/** Known-answer tests of every primitive the device relies on (vectors from the cited standards). */
const kats: Record<string, () => boolean> = {
  // FIPS 180-4 example "abc".
  sha256: () =>
    createHash('sha256').update('abc').digest('hex') === 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  // RFC 4231 test case 2.
  'hmac-sha256': () =>
    createHmac('sha256', 'Jefe').update('what do ya want for nothing?').digest('hex') ===
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  // NIST SP 800-38D (GCM spec test case 14): AES-256, zero key, zero block, 96-bit zero IV.
  'aes-256-gcm': () => {
    const cipher = createCipheriv('aes-256-gcm', Buffer.alloc(32), Buffer.alloc(12))
    const ciphertext = Buffer.concat([cipher.update(Buffer.alloc(16)), cipher.final()])
    return (
      ciphertext.toString('hex') === 'cea7403d4d606b6e074ec5d3baf39d18' &&
      cipher.getAuthTag().toString('hex') === 'd0d1c8a799996bf0265b98b5d48ab919'
    )
  },
  // RFC 8032 §7.1 test 1.
  ed25519: () => {
    const key = createPrivateKey({
      key: Buffer.concat([hex('302e020100300506032b657004220420'), hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60')]),
      format: 'der',
      type: 'pkcs8',
    })
    return (
      sign(null, Buffer.alloc(0), key).toString('hex') ===
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'
    )
  },
  // RFC 7748 §6.1.
  x25519: () => {
    const alice = createPrivateKey({
      key: Buffer.concat([hex('302e020100300506032b656e04220420'), hex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a')]),
      format: 'der',
      type: 'pkcs8',
    })
    const bob = createPublicKey({
      key: Buffer.concat([hex('302a300506032b656e032100'), hex('de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f')]),
      format: 'der',
      type: 'spki',
    })
    return (
      diffieHellman({ privateKey: alice, publicKey: bob }).toString('hex') ===
      '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742'
    )
  },
}

/**
 * NIST SP 800-90B §4.4.1 repetition count test on a fresh sample: with full entropy per
 * byte assumed conservatively at 1 bit, a run of 41 equal bytes has probability < 2^-40.
 */
export function repetitionCountOk(sample: Uint8Array, cutoff = 41): boolean {
  let run = 1
  for (let i = 1; i < sample.length; i++) {
    run = sample[i] === sample[i - 1] ? run + 1 : 1
    if (run >= cutoff) return false
  }
  return true
}

export function runSelfTest(entropy: (n: number) => Uint8Array): SelfTestResult {
  const failedKats = Object.entries(kats)
    .filter(([, kat]) => {
      try {
        return !kat()
      } catch {
        return true
      }
    })
    .map(([name]) => name)
  let entropyOk: boolean
  try {
    entropyOk = repetitionCountOk(entropy(1024))
  } catch {
    entropyOk = false
  }
  return { failedKats, entropyOk }
}

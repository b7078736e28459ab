// ML-KEM and ML-DSA known-answer tests. They run once, on the one implementation both engines
// share, and their failures count like an engine's (fls_state 0x01).
import { createHash } from 'node:crypto'
import { bytes, flipBit, hex, runKatList, type Kat, type KatResult } from './kat-support.js'
import { ML_DSA_VECTORS, ML_KEM_VECTORS, type MlDsaVector, type MlKemVector } from './pq-vectors.js'
import type { PostQuantum } from './types.js'

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

/** FIPS 204's deterministic variant: rnd is 32 zero bytes. */
const deterministic = (n: number) => new Uint8Array(n)

/**
 * `compute` once per subject: a list's KATs share one key pair (and one encapsulation), where
 * each used to recompute it; key generation is most of their cost at boot.
 */
function once<T>(compute: (pq: PostQuantum) => T): (pq: PostQuantum) => T {
  let memo: { pq: PostQuantum; value: T } | undefined
  return (pq) => {
    if (memo?.pq !== pq) memo = { pq, value: compute(pq) }
    return memo.value
  }
}

function mlKemKats(v: MlKemVector): Kat<PostQuantum>[] {
  const keys = once((pq) => pq.mlKemKeyPair(v.variant, bytes(v.seed)))
  const encapsulate = once((pq) => pq.mlKemEncapsulate(v.variant, keys(pq).publicKey, () => bytes(v.m)))
  return [
    {
      name: `${v.variant} keyGen from d‖z`,
      passes: (pq) => {
        const { publicKey, secretKey } = keys(pq)
        return sha256(publicKey) === v.publicKeySha256 && sha256(secretKey) === v.secretKeySha256
      },
    },
    {
      name: `${v.variant} encapsulate with a fixed m`,
      passes: (pq) => {
        const { cipherText, sharedSecret } = encapsulate(pq)
        return sha256(cipherText) === v.cipherTextSha256 && hex(sharedSecret) === v.sharedSecret
      },
    },
    {
      name: `${v.variant} decapsulate, and reject a flipped bit implicitly`,
      passes: (pq) => {
        const { cipherText } = encapsulate(pq)
        const { secretKey } = keys(pq)
        return (
          hex(pq.mlKemDecapsulate(v.variant, secretKey, cipherText)) === v.sharedSecret &&
          hex(pq.mlKemDecapsulate(v.variant, secretKey, flipBit(cipherText))) === v.rejectionKey
        )
      },
    },
  ]
}

function mlDsaKats(v: MlDsaVector): Kat<PostQuantum>[] {
  const [message, context] = [bytes(v.message), bytes(v.context)]
  const keys = once((pq) => pq.mlDsaKeyPair(v.variant, bytes(v.seed)))
  return [
    {
      name: `${v.variant} keyGen from ξ`,
      passes: (pq) => {
        const { publicKey, secretKey } = keys(pq)
        return sha256(publicKey) === v.publicKeySha256 && sha256(secretKey) === v.secretKeySha256
      },
    },
    {
      name: `${v.variant} deterministic sign, verify, and refuse a flipped bit`,
      passes: (pq) => {
        const { publicKey, secretKey } = keys(pq)
        const signature = pq.mlDsaSign(v.variant, secretKey, message, context, deterministic)
        return (
          sha256(signature) === v.signatureSha256 &&
          pq.mlDsaVerify(v.variant, publicKey, message, signature, context) &&
          !pq.mlDsaVerify(v.variant, publicKey, message, flipBit(signature), context)
        )
      },
    },
  ]
}

/**
 * As FIPS 140-3 self-tests do, one parameter set per algorithm at boot (the default ones, ML-KEM-768
 * and ML-DSA-65): after the first, each further set costs little, but the first use of each scheme
 * costs about 0.1 s of JIT and table building. `every` adds the other four sets (the tests use it).
 */
const BOOT_VARIANTS: ReadonlySet<string> = new Set(['MLKEM768', 'MLDSA65'])

function postQuantumKats(every: boolean): Kat<PostQuantum>[] {
  const wanted = <V extends { variant: string }>(v: V) => every || BOOT_VARIANTS.has(v.variant)
  return [...ML_KEM_VECTORS.filter(wanted).flatMap(mlKemKats), ...ML_DSA_VECTORS.filter(wanted).flatMap(mlDsaKats)]
}

export const POST_QUANTUM_KAT_NAMES: readonly string[] = postQuantumKats(true).map((kat) => kat.name)

export function runPostQuantumKats(pq: PostQuantum, { every = false } = {}): KatResult {
  return runKatList(postQuantumKats(every), pq)
}

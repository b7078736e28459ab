import { randomBytes } from 'node:crypto'

/** The groups of the single-primitive loads (`--only sign,hmac,pqc`). */
export type PrimitiveGroup = 'sign' | 'hmac' | 'pqc'
export type PrimitiveId = 'eddsa' | 'ecdsa' | 'hmac' | 'mlkem' | 'mldsa'

/**
 * One crypto operation loaded on hemd and on the bare primitives baseline (baseline-primitives.ts)
 * with the same request; its scenarios are `<id>-bare` and `<id>-hemd`.
 */
export interface PrimitiveLoad {
  id: PrimitiveId
  group: PrimitiveGroup
  /** The key hemd's load uses, created through its API (crypto-contract §1). */
  key: { type: string; mode?: string }
  path: string
  /** The operation, for the report's titles. */
  what: string
  /** The request both servers get, naming hemd's key (the baseline ignores the KID and the token). */
  body(kid: string): string
}

/** Signed and MACed messages are as long as the encrypt load's plaintext. */
const MESSAGE_BYTES = 64
const message = () => randomBytes(MESSAGE_BYTES).toString('base64')

/** In the order a round runs them. */
export const PRIMITIVE_LOADS: readonly PrimitiveLoad[] = [
  {
    id: 'eddsa',
    group: 'sign',
    key: { type: 'ED25519' },
    path: '/api/crypto/exdsa/sign',
    what: 'Ed25519 sign',
    body: (kid) => JSON.stringify({ kid, msg: message(), alg: 'Ed25519' }),
  },
  {
    id: 'ecdsa',
    group: 'sign',
    key: { type: 'SECP256R1', mode: 'ExDSA' },
    path: '/api/crypto/exdsa/sign',
    what: 'ECDSA P-256 sign (SHA256WithECDSA)',
    body: (kid) => JSON.stringify({ kid, msg: message(), alg: 'SHA256WithECDSA' }),
  },
  {
    id: 'hmac',
    group: 'hmac',
    key: { type: 'SHA2-256' },
    path: '/api/crypto/hmac/hash',
    what: 'HMAC-SHA-256',
    body: (kid) => JSON.stringify({ kid, msg: message() }),
  },
  {
    id: 'mlkem',
    group: 'pqc',
    key: { type: 'MLKEM768' },
    path: '/api/crypto/pqc/mlkem/encaps',
    what: 'ML-KEM-768 encaps',
    body: (kid) => JSON.stringify({ kid }),
  },
  {
    id: 'mldsa',
    group: 'pqc',
    key: { type: 'MLDSA65' },
    path: '/api/crypto/pqc/mldsa/sign',
    what: 'ML-DSA-65 sign',
    body: (kid) => JSON.stringify({ kid, msg: message() }),
  },
]

// Digest, HMAC and AES key wrap known-answer tests, including two unwraps that must be refused.
import { AuthenticationError } from './errors.js'
import {
  DIGEST_VECTORS,
  HMAC_VECTORS,
  KEY_UNWRAP_FAIL_VECTOR,
  KEY_WRAP_VECTORS,
  type KeyWrapVector,
} from './hash-wrap-vectors.js'
import { bytes, flipBit, hex, throws, type Kat } from './kat-support.js'
import type { CryptoEngine, Digest } from './types.js'

function digestKats(): Kat<CryptoEngine>[] {
  return DIGEST_VECTORS.map((v) => ({
    name: v.name,
    passes: (e) => hex(e.digest(v.digest, bytes(v.message))) === v.output,
  }))
}

function hmacKats(): Kat<CryptoEngine>[] {
  return HMAC_VECTORS.flatMap((v) =>
    (Object.entries(v.macs) as [Digest, string][]).map(([digest, mac]) => ({
      name: `${v.name} HMAC-${digest}`,
      passes: (e: CryptoEngine) => hex(e.hmac(digest, bytes(v.key), bytes(v.message))) === mac,
    })),
  )
}

function keyWrapKats(v: KeyWrapVector): Kat<CryptoEngine>[] {
  const [kek, iv] = [bytes(v.kek), v.iv === undefined ? undefined : bytes(v.iv)]
  return [
    { name: `${v.name} wrap`, passes: (e) => hex(e.aesKeyWrap(kek, bytes(v.data), iv)) === v.wrapped },
    { name: `${v.name} unwrap`, passes: (e) => hex(e.aesKeyUnwrap(kek, bytes(v.wrapped), iv)) === v.data },
  ]
}

function refusedUnwrapKats(): Kat<CryptoEngine>[] {
  const tampered = KEY_WRAP_VECTORS[0]!
  const fail = KEY_UNWRAP_FAIL_VECTOR
  return [
    {
      name: `${tampered.name} with a flipped bit is refused`,
      passes: (e) =>
        throws(() => e.aesKeyUnwrap(bytes(tampered.kek), flipBit(bytes(tampered.wrapped), 12)), AuthenticationError),
    },
    {
      name: `${fail.name} is refused`,
      passes: (e) => throws(() => e.aesKeyUnwrap(bytes(fail.kek), bytes(fail.wrapped)), AuthenticationError),
    },
  ]
}

export function hashWrapKats(): Kat<CryptoEngine>[] {
  return [...digestKats(), ...hmacKats(), ...KEY_WRAP_VECTORS.flatMap(keyWrapKats), ...refusedUnwrapKats()]
}

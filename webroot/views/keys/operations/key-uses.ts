// What the device does with a key of each type (crypto-contract §1, §3), in one table: the "Use this
// key" section offers these operations and no other.
import type { KeyEntry } from '../../../../client/browser.js'
import { isKeyType, keyTypes, type KeyType } from '../../../../protocol/browser.js'

export type Use =
  | 'encrypt'
  | 'decrypt'
  | 'sign'
  | 'verify'
  | 'hmac'
  | 'hmac-check'
  | 'ecdh'
  | 'wrap'
  | 'unwrap'
  | 'encaps'
  | 'decaps'
  | 'derive'

/** What a listed key is, read from its listed type (`ATT,PKEY,ECDH,ExDSA,SECP256R1`). */
export interface KeyFacts {
  kid: string
  type: KeyType
  /** It holds its private or secret part (`PKEY`); an imported public key does not. */
  secret: boolean
  /** The ECDH flag: X25519/X448 always, a SECP curve as created. */
  ecdh: boolean
  /** The ExDSA flag: Ed25519/Ed448 always, a SECP curve as created. */
  exdsa: boolean
}

export function keyFacts(entry: Pick<KeyEntry, 'kid' | 'type'>): KeyFacts | undefined {
  const flags = entry.type.split(',')
  const type = flags.at(-1)
  if (!isKeyType(type)) return undefined
  return {
    kid: entry.kid,
    type,
    secret: flags.includes('PKEY'),
    ecdh: flags.includes('ECDH'),
    exdsa: flags.includes('ExDSA'),
  }
}

/** A private ECDH key: the AES key of encrypt, wrap and HMAC comes from the agreement with a peer. */
const AGREEMENT: Use[] = ['encrypt', 'decrypt', 'hmac', 'hmac-check', 'ecdh', 'wrap', 'unwrap', 'derive']
/** A public key verifies; its private twin signs too. */
const signing = (secret: boolean): Use[] => (secret ? ['sign', 'verify'] : ['verify'])

/** The operations the device offers for this key, in the order the section shows them. */
export function usesOf(key: KeyFacts): Use[] {
  switch (keyTypes[key.type].kind) {
    case 'aes':
      return ['encrypt', 'decrypt', 'wrap', 'unwrap']
    case 'hmac':
      return ['hmac', 'hmac-check']
    case 'ecdh':
      return key.secret ? AGREEMENT : []
    case 'eddsa':
    case 'mldsa':
      return signing(key.secret)
    case 'ec':
      return [...(key.exdsa ? signing(key.secret) : []), ...(key.ecdh && key.secret ? AGREEMENT : [])]
    case 'mlkem':
      // An encapsulation needs only the public key.
      return key.secret ? ['encaps', 'decaps'] : ['encaps']
  }
}

/** Whether `other` can be the peer of an agreement with `key`: another ECDH key of its curve, public will do. */
export function isPeerOf(key: KeyFacts, other: KeyFacts): boolean {
  return other.ecdh && other.type === key.type && other.kid !== key.kid
}

/** The AES widths a key can use: an AES key cut to a width no wider than itself; an agreement's any. */
export function aesWidths(key: KeyFacts): (128 | 192 | 256)[] {
  const all = [128, 192, 256] as const
  const info = keyTypes[key.type]
  return info.kind === 'aes' ? all.filter((bits) => bits <= info.bytes * 8) : [...all]
}

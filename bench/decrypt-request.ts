import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto'

/** The body of `POST /api/crypto/cipher/decrypt` (AES256-GCM), as the bare ceiling reads it. */
export interface DecryptRequest {
  msg: Buffer
  iv: Buffer
  tag: Buffer
  /** The peer's raw X25519 public key, for an indirect (ECDH) decrypt. */
  pubkey: Buffer | undefined
}

/** The device's HKDF info prefix (docs/api.md, Keys and ciphers): "encedo-aes" || ctx, no ctx here. */
const HKDF_INFO = Buffer.from('encedo-aes')
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

/** An X25519 key pair, with its public key raw as the device shows and takes it. */
export interface X25519Pair {
  privateKey: KeyObject
  publicRaw: Buffer
}

export function x25519Pair(): X25519Pair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519')
  return { privateKey, publicRaw: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url') }
}

/** PKCS#8 DER of a private key, base64, to hand a bench key to a baseline's process. */
export function exportPrivate(key: KeyObject): string {
  return key.export({ format: 'der', type: 'pkcs8' }).toString('base64')
}

export function importPrivate(der: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs8' })
}

/** The AES-256 key of an indirect cipher: HKDF-SHA256(X25519(own, peer), no salt, info, 32 bytes). */
export function ecdhAesKey(own: KeyObject, peerRaw: Uint8Array): Buffer {
  const peer = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(peerRaw).toString('base64url') },
    format: 'jwk',
  })
  const shared = diffieHellman({ privateKey: own, publicKey: peer })
  return Buffer.from(hkdfSync('sha256', shared, Buffer.alloc(0), HKDF_INFO, 32))
}

/** A decrypt body for 64 random bytes sealed with AES-256-GCM under `key`; `pubkey` makes it indirect. */
export function decryptRequestBody(kid: string, key: Uint8Array, pubkey?: Uint8Array): string {
  const iv = randomBytes(16)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const msg = Buffer.concat([cipher.update(randomBytes(64)), cipher.final()])
  return JSON.stringify({
    kid,
    alg: 'AES256-GCM',
    msg: b64(msg),
    iv: b64(iv),
    tag: b64(cipher.getAuthTag()),
    ...(pubkey ? { pubkey: b64(pubkey) } : {}),
  })
}

export function parseDecryptRequest(raw: Buffer): DecryptRequest {
  const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
  const field = (name: string): Buffer => {
    const value = body[name]
    if (typeof value !== 'string') throw new TypeError(`expected a ${name} string`)
    return Buffer.from(value, 'base64')
  }
  return {
    msg: field('msg'),
    iv: field('iv'),
    tag: field('tag'),
    pubkey: body.pubkey === undefined ? undefined : field('pubkey'),
  }
}

/** AES-256-GCM open; throws when the tag does not verify. */
export function gcmOpen(key: Uint8Array, request: DecryptRequest): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, request.iv)
  decipher.setAuthTag(request.tag)
  return Buffer.concat([decipher.update(request.msg), decipher.final()])
}

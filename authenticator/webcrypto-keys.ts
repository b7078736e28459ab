import { ExtAuthKeyError, x25519Clamp } from '../protocol/browser.js'
import type { AgreedKey, AidKey, KeyProvider, NewAidKey } from './aid-key.js'

/** A WebCrypto key, named so in node's types and the DOM's alike. */
export type WebCryptoKey = Awaited<ReturnType<SubtleCryptoLike['importKey']>>
type SubtleCryptoLike = typeof globalThis.crypto.subtle

const X25519 = { name: 'X25519' } as const
const AGREED = { name: 'HMAC', hash: 'SHA-256', length: 256 } as const
/** RFC 7748's base point u = 9: X25519(aid_prv, 9) is `aid`, computed without the private key leaving WebCrypto. */
const BASE_POINT = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 9 : 0))
/** PKCS#8 of an X25519 private key (RFC 8410) before its 32 bytes. */
const PKCS8_PREFIX = Uint8Array.of(
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x6e,
  0x04,
  0x22,
  0x04,
  0x20,
)

/**
 * The web page's keys: `aid_prv` a non-extractable X25519 CryptoKey (the handle IndexedDB keeps), S_pair and S_ab
 * derived straight into non-extractable HMAC keys, so that no private key nor shared secret reaches JS.
 */
export class WebCryptoKeys implements KeyProvider<WebCryptoKey> {
  constructor(private readonly subtle: SubtleCryptoLike = globalThis.crypto.subtle) {}

  async generate(): Promise<NewAidKey<WebCryptoKey>> {
    const pair = await this.subtle.generateKey(X25519, false, ['deriveKey', 'deriveBits'])
    if (!('privateKey' in pair)) throw new TypeError('X25519 generated no key pair')
    const aid = new Uint8Array(await this.subtle.exportKey('raw', pair.publicKey))
    return { key: this.key(pair.privateKey, aid), handle: pair.privateKey }
  }

  /** Imported non-extractable; its public key is X25519 with the base point, as RFC 7748 defines it. */
  async fromSeed(seed: Uint8Array): Promise<NewAidKey<WebCryptoKey>> {
    const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + 32)
    pkcs8.set(PKCS8_PREFIX)
    pkcs8.set(x25519Clamp(seed), PKCS8_PREFIX.length)
    const privateKey = await this.subtle.importKey('pkcs8', pkcs8, X25519, false, ['deriveKey', 'deriveBits'])
    pkcs8.fill(0)
    const aid = new Uint8Array(
      await this.subtle.deriveBits({ ...X25519, public: await this.peer(BASE_POINT) }, privateKey, 256),
    )
    return { key: this.key(privateKey, aid), handle: privateKey }
  }

  /** The origin's own IndexedDB holds the handle: nothing but this page wrote it. */
  open(handle: WebCryptoKey, aid: Uint8Array): Promise<AidKey> {
    return Promise.resolve(this.key(handle, aid))
  }

  async hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
    const hmacKey = await this.subtle.importKey('raw', own(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    return new Uint8Array(await this.subtle.sign('HMAC', hmacKey, own(data)))
  }

  async encrypt(key: Uint8Array, iv: Uint8Array, plain: Uint8Array): Promise<Uint8Array> {
    const aes = await this.subtle.importKey('raw', own(key), 'AES-CBC', false, ['encrypt'])
    return new Uint8Array(await this.subtle.encrypt({ name: 'AES-CBC', iv: own(iv) }, aes, own(plain)))
  }

  async decrypt(key: Uint8Array, iv: Uint8Array, ct: Uint8Array): Promise<Uint8Array> {
    const aes = await this.subtle.importKey('raw', own(key), 'AES-CBC', false, ['decrypt'])
    return new Uint8Array(await this.subtle.decrypt({ name: 'AES-CBC', iv: own(iv) }, aes, own(ct)))
  }

  private key(privateKey: WebCryptoKey, aid: Uint8Array): AidKey {
    return { aid, agree: (peer) => this.agree(privateKey, peer) }
  }

  /** WebCrypto refuses an all-zero output itself (Secure Curves: OperationError); both failures are ours. */
  private async agree(privateKey: WebCryptoKey, peer: Uint8Array): Promise<AgreedKey> {
    let agreed: WebCryptoKey
    try {
      const algorithm = { ...X25519, public: await this.peer(peer) }
      agreed = await this.subtle.deriveKey(algorithm, privateKey, AGREED, false, ['sign'])
    } catch (err) {
      if (err instanceof ExtAuthKeyError) throw err
      throw new ExtAuthKeyError('the peer key gives no shared secret', { cause: err })
    }
    return { hmac: async (data) => new Uint8Array(await this.subtle.sign('HMAC', agreed, own(data))) }
  }

  private peer(publicKey: Uint8Array): Promise<WebCryptoKey> {
    if (publicKey.length !== 32) throw new ExtAuthKeyError('the public key is not 32 bytes')
    return this.subtle.importKey('raw', own(publicKey), X25519, true, [])
  }
}

/** A copy on an ArrayBuffer of its own: the DOM's typings refuse a view that could be on a SharedArrayBuffer. */
function own(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes)
}

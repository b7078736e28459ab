import { cbc } from '@noble/ciphers/aes.js'
import { hmacSha256, sameBytes, x25519Agree, x25519Clamp, x25519PublicKey } from '../protocol/browser.js'
import type { AidKey, KeyProvider, NewAidKey } from './aid-key.js'
import { PairingError } from './pairing-error.js'
import type { Sealer } from './pairing-store.js'

/**
 * The CLI's keys: noble over raw `aid_prv` bytes, kept at rest as the sealer's text. A flow's step opens them into
 * an AidKey and drops it with the step.
 */
export class NobleKeys implements KeyProvider<string> {
  constructor(
    private readonly sealer: Sealer,
    /** `length` random bytes: node's or WebCrypto's generator. */
    private readonly random: (length: number) => Uint8Array,
  ) {}

  generate(): Promise<NewAidKey<string>> {
    return this.fromSeed(this.random(32))
  }

  async fromSeed(seed: Uint8Array): Promise<NewAidKey<string>> {
    const aidPrv = x25519Clamp(seed)
    return { key: this.key(aidPrv, x25519PublicKey(aidPrv)), handle: await this.sealer.seal(aidPrv) }
  }

  /** Checked against `aid`: a store edited by hand is refused. */
  async open(handle: string, aid: Uint8Array): Promise<AidKey> {
    const aidPrv = await this.sealer.open(handle)
    if (aidPrv.length !== 32 || !sameBytes(x25519PublicKey(aidPrv), aid))
      throw new PairingError('the stored pairing is damaged')
    return this.key(aidPrv, aid)
  }

  hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
    return Promise.resolve(hmacSha256(key, data))
  }

  encrypt(key: Uint8Array, iv: Uint8Array, plain: Uint8Array): Promise<Uint8Array> {
    return Promise.resolve(cbc(key, iv).encrypt(plain))
  }

  async decrypt(key: Uint8Array, iv: Uint8Array, ct: Uint8Array): Promise<Uint8Array> {
    return cbc(key, iv).decrypt(ct)
  }

  private key(aidPrv: Uint8Array, aid: Uint8Array): AidKey {
    return {
      aid,
      agree: async (peer) => {
        const shared = x25519Agree(aidPrv, peer)
        return { hmac: async (data) => hmacSha256(shared, data) }
      },
    }
  }
}

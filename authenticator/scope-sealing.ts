import { joinSealedScope, sameBytes, splitSealedScope } from '../protocol/browser.js'
import type { AgreedKey, ScopeCipher } from './aid-key.js'

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** Scheme "A" (§2.5) through a key provider: protocol/scope-seal.ts's, with S_pair kept where the provider keeps it. */
export async function sealScopeWith(
  cipher: ScopeCipher,
  sPair: AgreedKey,
  text: string,
  jti: Uint8Array,
): Promise<string> {
  const k = await sPair.hmac(jti)
  const plain = utf8.encode(text)
  const ct = await cipher.encrypt(k.subarray(0, 16), k.subarray(16, 32), plain)
  return joinSealedScope(ct, await cipher.hmac(k, plain))
}

/** The scope a sealed value holds, or undefined when anything about it is wrong (scheme, length, padding, tag). */
export async function openScopeWith(
  cipher: ScopeCipher,
  sPair: AgreedKey,
  value: unknown,
  jti: Uint8Array,
): Promise<string | undefined> {
  const sealed = splitSealedScope(value)
  if (!sealed) return undefined
  const k = await sPair.hmac(jti)
  let plain: Uint8Array
  try {
    plain = await cipher.decrypt(k.subarray(0, 16), k.subarray(16, 32), sealed.ct)
  } catch {
    return undefined
  }
  if (!sameBytes(await cipher.hmac(k, plain), sealed.tag)) return undefined
  try {
    return strictUtf8.decode(plain)
  } catch {
    return undefined
  }
}

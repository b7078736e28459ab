// The crypto calls, each with the token of its key's own scope (keymgmt:use:<kid>): ciphers,
// signatures, MACs, agreement, key wrap, post-quantum. Free of node: hemctl runs them on its
// DeviceSession, the management app on its own session (each a DeviceJson).
import { base64Field, toBase64 as b64 } from './base64.js'
import * as body from './crypto-input.js'
import type { DeviceJson } from './device-json.js'
import { NotAcceptableError, UnexpectedAnswerError } from './errors.js'
import type * as T from './types.js'

export async function encrypt(s: DeviceJson, input: T.EncryptInput): Promise<T.Encrypted> {
  const answer = await useKeyJson(s, input.kid, 'cipher/encrypt', cipherBody(input), ['ciphertext'])
  const { iv, tag } = answer as { iv?: string; tag?: string }
  return {
    ciphertext: base64Field(answer.ciphertext),
    ...(iv ? { iv: base64Field(iv) } : {}),
    ...(tag ? { tag: base64Field(tag) } : {}),
  }
}

export async function decrypt(s: DeviceJson, input: T.DecryptInput): Promise<Uint8Array> {
  const json = {
    ...cipherBody(input),
    ...(input.iv ? { iv: b64(input.iv) } : {}),
    ...(input.tag ? { tag: b64(input.tag) } : {}),
  }
  return useKey(s, input.kid, 'cipher/decrypt', json, 'plaintext')
}

export const sign = async (s: DeviceJson, input: T.SignInput) =>
  useKey(s, input.kid, 'exdsa/sign', body.signBody(input), 'sign')

export const verifySignature = async (s: DeviceJson, input: T.VerifyInput) =>
  verdict(s, input.kid, 'exdsa/verify', body.verifyBody(input))

export const hmac = async (s: DeviceJson, input: T.HmacInput) =>
  useKey(s, input.kid, 'hmac/hash', body.hmacBody(input), 'mac')

export const hmacVerify = async (s: DeviceJson, input: T.HmacVerifyInput) =>
  verdict(s, input.kid, 'hmac/verify', body.hmacVerifyBody(input))

export const ecdh = async (s: DeviceJson, input: T.EcdhInput) =>
  useKey(s, input.kid, 'ecdh', body.ecdhBody(input), 'ecdh')

export const wrap = async (s: DeviceJson, input: T.WrapInput) =>
  useKey(s, input.kid, 'cipher/wrap', body.wrapBody(input, 'wrap'), 'wrapped')

export const unwrap = async (s: DeviceJson, input: T.WrapInput) =>
  useKey(s, input.kid, 'cipher/unwrap', body.wrapBody(input, 'unwrap'), 'unwrapped')

export async function mlKemEncapsulate(s: DeviceJson, kid: string): Promise<T.Encapsulated> {
  const json = { kid: body.checkKid(kid) }
  const answer = await useKeyJson(s, kid, 'pqc/mlkem/encaps', json, ['alg', 'ss', 'ct'])
  return { alg: answer.alg, sharedSecret: base64Field(answer.ss), ciphertext: base64Field(answer.ct) }
}

export async function mlKemDecapsulate(s: DeviceJson, kid: string, ciphertext: Uint8Array): Promise<T.Decapsulated> {
  const answer = await useKeyJson(s, kid, 'pqc/mlkem/decaps', body.decapsBody(kid, ciphertext), ['alg', 'ss'])
  return { alg: answer.alg, sharedSecret: base64Field(answer.ss) }
}

export async function mlDsaSign(s: DeviceJson, input: T.MlDsaSignInput): Promise<T.MlDsaSigned> {
  const answer = await useKeyJson(s, input.kid, 'pqc/mldsa/sign', body.mlDsaSignBody(input), ['alg', 'sign'])
  return { alg: answer.alg, signature: base64Field(answer.sign) }
}

export const mlDsaVerify = async (s: DeviceJson, input: T.MlDsaVerifyInput) =>
  verdict(s, input.kid, 'pqc/mldsa/verify', body.mlDsaVerifyBody(input))

/** A crypto route's answer fields, each a string, with the token of the key's scope. */
async function useKeyJson<F extends string>(
  s: DeviceJson,
  kid: string,
  route: string,
  json: Record<string, string>,
  fields: readonly F[],
): Promise<Record<F, string>> {
  const path = `/api/crypto/${route}`
  const answer = await s.authorizedJson<unknown>(`keymgmt:use:${kid}`, 'POST', path, { json })
  const missing = fields.find((f) => typeof (answer as Record<string, unknown> | undefined)?.[f] !== 'string')
  if (missing !== undefined) throw new UnexpectedAnswerError(`POST ${path}: the answer has no ${missing} string`)
  return answer as Record<F, string>
}

async function useKey(
  s: DeviceJson,
  kid: string,
  route: string,
  json: Record<string, string>,
  field: string,
): Promise<Uint8Array> {
  return base64Field((await useKeyJson(s, kid, route, json, [field]))[field]!)
}

/** A verify route: 200 (empty) is true, 406 false, anything else throws. */
async function verdict(s: DeviceJson, kid: string, route: string, json: Record<string, string>): Promise<boolean> {
  try {
    await s.authorizedJson<unknown>(`keymgmt:use:${kid}`, 'POST', `/api/crypto/${route}`, { json })
    return true
  } catch (error) {
    if (error instanceof NotAcceptableError) return false
    throw error
  }
}

function cipherBody(input: T.EncryptInput): Record<string, string> {
  return {
    alg: input.alg,
    kid: input.kid,
    msg: b64(input.msg),
    ...(input.aad ? { aad: b64(input.aad) } : {}),
    ...(input.ctx ? { ctx: b64(input.ctx) } : {}),
    ...(input.extKid ? { ext_kid: input.extKid } : {}),
    ...(input.pubkey ? { pubkey: b64(input.pubkey) } : {}),
  }
}

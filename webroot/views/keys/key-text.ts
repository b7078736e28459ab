// A key's attributes as the owner reads and types them, checked by the contract's own rules
// (protocol/key-types.ts) before anything is sent.
import { fromBase64, toBase64 } from '../../../client/browser.js'
import { checkDescr, checkLabel, KeyAttributeError, normaliseKid } from '../../../protocol/browser.js'

export const LABEL_RULE = '1 to 32 printable ASCII characters: letters, digits, spaces and punctuation.'
export const DESCR_RULE =
  'Optional. At most 64 bytes: plain text (UTF-8), or base64: followed by base64 for binary bytes. Searchable.'
export const KID_RULE = '32 hexadecimal digits, as the list shows it.'

const BINARY = 'base64:'
const PRINTABLE_TEXT = /^[^\p{Cc}]*$/u

/** A `descr` from the device (base64) as text: UTF-8 when it is readable text, else `base64:…`. */
export function descrText(descr: string | undefined): string {
  if (!descr) return ''
  const bytes = fromBase64(descr)
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    if (PRINTABLE_TEXT.test(text) && !text.startsWith(BINARY)) return text
  } catch {
    // not UTF-8: shown as its bytes
  }
  return BINARY + descr
}

/** The bytes a description field stands for; throws a KeyAttributeError for bad base64. */
export function descrBytes(text: string): Uint8Array {
  if (!text.startsWith(BINARY)) return new TextEncoder().encode(text)
  const b64 = text.slice(BINARY.length).trim()
  try {
    if (/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return fromBase64(b64)
  } catch {
    // reported below
  }
  throw new KeyAttributeError('the description after base64: is not base64')
}

/** Why the contract refuses this label, or undefined when it takes it. */
export function labelProblem(label: string): string | undefined {
  try {
    checkLabel(label)
    return undefined
  } catch {
    return `The label must be ${LABEL_RULE.charAt(0).toLowerCase()}${LABEL_RULE.slice(1)}`
  }
}

/** Why the contract refuses this description, or undefined when it takes it (empty: none). */
export function descrProblem(text: string): string | undefined {
  let bytes: Uint8Array
  try {
    bytes = descrBytes(text)
  } catch {
    return 'The description after base64: is not base64.'
  }
  try {
    checkDescr(toBase64(bytes), fromBase64)
    return undefined
  } catch {
    return `The description must be at most 64 bytes; this one is ${bytes.length}.`
  }
}

/** The description as the API wants it: base64, or absent when empty. */
export function descrField(text: string): { descr?: string } {
  const bytes = descrBytes(text)
  return bytes.length > 0 ? { descr: toBase64(bytes) } : {}
}

export function kidProblem(kid: string): string | undefined {
  return normaliseKid(kid.trim()) ? undefined : `A KID is ${KID_RULE.charAt(0).toLowerCase()}${KID_RULE.slice(1)}`
}

/** What a listed `type` (`ATT,PKEY,ECDH,ExDSA,SECP256R1`) says: algorithm last, usage flags, what is held. */
export function listedParts(type: string): { algorithm: string; usage: string; holds: string } {
  const tokens = type.split(',')
  const algorithm = tokens.at(-1) ?? type
  const usage = tokens.slice(0, -1).filter((flag) => flag !== 'ATT' && flag !== 'PKEY')
  const secret = tokens.includes('PKEY')
  const symmetric = /^(AES|SHA)/.test(algorithm)
  return {
    algorithm,
    usage: usage.join(', ') || (symmetric ? (algorithm.startsWith('AES') ? 'cipher, wrap' : 'HMAC') : ''),
    holds: !secret ? 'public key only' : symmetric ? 'secret key' : 'private key',
  }
}

const MONTHS = 'January February March April May June July August September October November December'.split(' ')

/** Unix seconds of the device's clock as a date in words, in the device's zone (UTC): "28 November 2026, 14:03 UTC". */
export function dateWords(seconds: number): string {
  const date = new Date(seconds * 1000)
  const time = date.toISOString().slice(11, 16)
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}, ${time} UTC`
}

/** A KID's short form, its first 8 and last 4 digits ("1a2b3c4d…9f0c"): enough to tell keys apart at a glance. */
export function shortKid(kid: string): string {
  return kid.length > 12 ? `${kid.slice(0, 8)}…${kid.slice(-4)}` : kid
}

/** A KID in groups of 8 digits, the places where it may break across lines. */
export function kidGroups(kid: string): string[] {
  return kid.match(/.{1,8}/g) ?? [kid]
}

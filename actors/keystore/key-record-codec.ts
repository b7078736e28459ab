// A key record as the bytes the repository seals: a msgpackr map of the KeyRecord fields.
// Encoding and decoding check the same rules, so a record that was stored always reads back,
// and bytes that read back are a record the keystore could have made.

import { Packr } from 'msgpackr'
import { CURVES } from '../../hal/index.js'
import { KeyRecordFormatError } from './errors.js'
import {
  checkLabel,
  isKeyType,
  type KeyAttributeError,
  keyMode,
  type KeyMode,
  type KeyRecord,
  type KeyType,
  keyTypes,
} from '../../protocol/index.js'

// Records (shared structures) would make the bytes depend on what the decoder saw before.
const packr = new Packr({ useRecords: false })

const FIELDS = new Set(['kid', 'type', 'mode', 'label', 'descr', 'created', 'updated', 'secret', 'publicKey'])
const KID = /^[0-9a-f]{32}$/
const MAX_DESCR = 64

export function encodeKeyRecord(record: KeyRecord): Uint8Array {
  // A copy: msgpackr hands out views of a buffer it reuses.
  return Uint8Array.from(packr.pack(checkedRecord(record)))
}

/** The record in `bytes`; KeyRecordFormatError when they are not exactly a valid one. */
export function decodeKeyRecord(bytes: Uint8Array): KeyRecord {
  let value: unknown
  try {
    value = packr.unpack(bytes)
  } catch {
    // msgpackr's messages can quote what it read, and that may be key material: no cause.
    throw new KeyRecordFormatError('the key record is not one MessagePack value')
  }
  return checkedRecord(value)
}

function checkedRecord(value: unknown): KeyRecord {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    throw new KeyRecordFormatError('a key record must be a map')
  }
  const fields = value as Record<string, unknown>
  const unknown = Object.keys(fields).find((name) => !FIELDS.has(name))
  if (unknown !== undefined) throw new KeyRecordFormatError(`a key record has no field ${JSON.stringify(unknown)}`)
  const { kid, type, mode, label, descr, created, updated, secret, publicKey } = fields
  if (typeof kid !== 'string' || !KID.test(kid))
    throw new KeyRecordFormatError('`kid` must be 32 lowercase hex characters')
  if (!isKeyType(type)) throw new KeyRecordFormatError('`type` is not a key type')
  const sizes = materialSizes(type)
  const record: KeyRecord = {
    kid,
    type,
    ...(mode === undefined ? {} : { mode: storedMode(type, mode) }),
    label: attribute(() => checkLabel(label)),
    ...(descr === undefined ? {} : { descr: bytes('descr', descr, (n) => n <= MAX_DESCR, `at most ${MAX_DESCR}`) }),
    created: seconds('created', created),
    updated: seconds('updated', updated),
  }
  if (secret !== undefined) record.secret = bytes('secret', secret, (n) => n === sizes.secret, `${sizes.secret}`)
  else if (sizes.publicKey === undefined) throw new KeyRecordFormatError(`a ${type} key must have \`secret\``)
  if (sizes.publicKey === undefined) {
    if (publicKey !== undefined) throw new KeyRecordFormatError(`a ${type} key has no \`publicKey\``)
  } else {
    record.publicKey = bytes('publicKey', publicKey, (n) => n === sizes.publicKey, `${sizes.publicKey}`)
    if (keyTypes[type].kind === 'ec' && record.publicKey[0] !== 2 && record.publicKey[0] !== 3) {
      throw new KeyRecordFormatError('`publicKey` of a SECP* key must be compressed SEC1')
    }
  }
  return record
}

/** Bytes of the secret and the public key of a type; no public key for symmetric keys. */
function materialSizes(type: KeyType): { secret: number; publicKey: number | undefined } {
  const info = keyTypes[type]
  switch (info.kind) {
    case 'aes':
    case 'hmac':
      return { secret: info.bytes, publicKey: undefined }
    case 'ecdh':
    case 'ec':
      return { secret: CURVES[info.curve].size, publicKey: info.publicKey }
    case 'eddsa':
      // RFC 8032: the seed is as long as the public key.
      return { secret: info.publicKey, publicKey: info.publicKey }
    case 'mlkem':
    case 'mldsa':
      // The FIPS 203/204 seed, expanded on use.
      return { secret: info.seed, publicKey: info.publicKey }
  }
}

/** A mode as the keystore stores it: only on SECP keys, and spelled as `keyMode` spells it. */
function storedMode(type: KeyType, mode: unknown): KeyMode {
  const read = attribute(() => keyMode(type, mode))
  if (read === undefined || read !== mode) throw new KeyRecordFormatError(`\`mode\` is not one of a ${type} key`)
  return read
}

/** The keystore's own attribute rule, failing as a record format error. */
function attribute<T>(check: () => T): T {
  try {
    return check()
  } catch (err) {
    throw new KeyRecordFormatError((err as KeyAttributeError).message, { cause: err })
  }
}

function bytes(name: string, value: unknown, fits: (length: number) => boolean, size: string): Uint8Array {
  if (!(value instanceof Uint8Array) || !fits(value.length))
    throw new KeyRecordFormatError(`\`${name}\` must be ${size} bytes`)
  // A copy that owns its memory: neither the caller's array nor msgpackr's buffer stays linked.
  return Uint8Array.from(value)
}

function seconds(name: string, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new KeyRecordFormatError(`\`${name}\` must be Unix seconds`)
  return value as number
}

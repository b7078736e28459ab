import { base64Field, type Digest, digests, normaliseKid } from '../../protocol/index.js'

/** Decoded bytes of `msg` every crypto operation accepts (crypto-contract §3). */
export const MSG_BYTES = 2048
/** RFC 8032's and FIPS 204's context: its length is one byte (crypto-contract §3, `ctx ≤ 255 B`). */
const CONTEXT_BYTES = 255

/** The peer of an ECDH mode: a stored key, or a public key given in the request. */
export type Peer = { extKid: string } | { publicKey: Uint8Array }

/** A request the device refuses as malformed (400); the message names the field, never its value. */
export class CryptoRequestError extends Error {
  override readonly name = 'CryptoRequestError'
  constructor(
    message: string,
    /** The request's KID when it was readable, for the journal entry. */
    readonly kid?: string,
  ) {
    super(message)
  }
}

/**
 * The JSON body of a crypto operation, as received, with its readable `kid`: the fields are read
 * one by one by the operation, each refusal naming the field. A JSON null counts as absent.
 */
export class CryptoRequest {
  private constructor(
    private readonly fields: Record<string, unknown>,
    readonly kid: string,
  ) {}

  /** The body's object and its KID, or a 400 (without a KID: none could be read). */
  static parse(raw: string): CryptoRequest {
    let body: unknown
    try {
      body = JSON.parse(raw)
    } catch {
      throw new CryptoRequestError('The body is not valid JSON')
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new CryptoRequestError('The body must be a JSON object')
    const fields = body as Record<string, unknown>
    const kid = normaliseKid(fields.kid)
    if (!kid) throw new CryptoRequestError('`kid` must be 32 hex characters')
    return new CryptoRequest(fields, kid)
  }

  bad(message: string): CryptoRequestError {
    return new CryptoRequestError(message, this.kid)
  }

  /** A field as sent, undefined when absent or null. */
  value(name: string): unknown {
    const value = this.fields[name]
    return value === null ? undefined : value
  }

  /**
   * Base64 of `min`–`max` bytes; undefined when absent and not required. Without `max`, any length
   * the body limit lets through is well-formed: a wrong one is the operation's failure (406).
   */
  bytes(
    name: string,
    max = Number.POSITIVE_INFINITY,
    options: { required?: boolean; min?: number } = {},
  ): Uint8Array | undefined {
    const value = this.value(name)
    if (value === undefined) {
      if (options.required) throw this.bad(`\`${name}\` is required`)
      return undefined
    }
    const decoded = base64Field(value)
    if (!decoded) throw this.bad(`\`${name}\` must be base64`)
    const min = options.min ?? 0
    if (decoded.length < min || decoded.length > max) {
      const range =
        max === Number.POSITIVE_INFINITY ? `at least ${min}` : min > 0 ? `${min} to ${max}` : `at most ${max}`
      throw this.bad(`\`${name}\` must be ${range} bytes`)
    }
    return decoded
  }

  /** Base64 of 1 to `max` bytes (any number without `max`), required. */
  required(name: string, max?: number): Uint8Array {
    return this.bytes(name, max, { required: true, min: 1 })!
  }

  /** The message of 1 to 2048 (or `max`) bytes. */
  msg(max: number = MSG_BYTES): Uint8Array {
    return this.required('msg', max)
  }

  /** Base64 of exactly `length` bytes, or undefined when absent and not required. */
  exactly(name: string, length: number, required = false): Uint8Array | undefined {
    const value = this.bytes(name, length, { required })
    if (value && value.length !== length) throw this.bad(`\`${name}\` must be ${length} bytes`)
    return value
  }

  /** One of `names`, or undefined when absent and not required; anything else is a 400. */
  choice<T extends string>(name: string, names: readonly T[], required = false): T | undefined {
    const value = this.value(name)
    if (value === undefined && !required) return undefined
    if (typeof value !== 'string' || !(names as readonly string[]).includes(value))
      throw this.bad(`\`${name}\` must be one of ${names.join(', ')}`)
    return value as T
  }

  /** `alg` as an ECDH mode's digest (`SHA2-256` … `SHA3-512`), or undefined when absent. */
  digest(): Digest | undefined {
    return this.choice('alg', Object.keys(digests) as Digest[])
  }

  /** The ECDH peer: `ext_kid` wins over `pubkey` (the other is then not read). */
  peer(): Peer | undefined {
    const extKid = this.value('ext_kid')
    if (extKid !== undefined) {
      const kid = normaliseKid(extKid)
      if (!kid) throw this.bad('`ext_kid` must be 32 hex characters')
      return { extKid: kid }
    }
    // Any length: one that is no key of the curve is the operation's 406, as a point off it is.
    const publicKey = this.bytes('pubkey', undefined, { min: 1 })
    return publicKey ? { publicKey } : undefined
  }

  /**
   * The fields of a signature operation: `msg`, `ctx` (empty when absent) and, to verify, `sign`
   * of any length (one no signature of the key can have merely does not verify: 406).
   */
  signing(verify: boolean): SigningFields {
    const msg = this.msg()
    const ctx = this.bytes('ctx', CONTEXT_BYTES) ?? new Uint8Array(0)
    return { msg, ctx, ...(verify ? { signature: this.required('sign') } : {}) }
  }
}

/** What `CryptoRequest.signing` reads. */
export interface SigningFields {
  msg: Uint8Array
  ctx: Uint8Array
  signature?: Uint8Array
}

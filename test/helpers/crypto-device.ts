// One personalised device per crypto test file, its keys with their use tokens, and the checks
// every family shares: the statuses and journal records of 200, 400, 403, 406 and 409.
import { createECDH, createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from 'node:crypto'
import type { Test } from 'tap'
import { sendSimCommand } from '../../cli/hemd/sim-cli.js'
import { LogResult, LogType } from '../../protocol/journal.js'
import type { Answer } from './http.js'
import { call } from './http.js'
import { readJournal } from './journal.js'
import { api, b64, bytesOf, Tokens } from './keys.js'
import { login, owned, type Owned } from './owner.js'
import { until } from './until.js'

export interface DeviceKey {
  kid: string
  /** Its `keymgmt:use:<kid>` token. */
  use: string
  /** `get.pubkey`, for an asymmetric key. */
  pubkey?: Uint8Array
}

/** A device and its owner's tokens, for the crypto endpoints. */
export class CryptoDevice {
  readonly tokens: Tokens
  private constructor(readonly o: Owned) {
    this.tokens = new Tokens(o.base)
  }

  static async boot(t: Test): Promise<CryptoDevice> {
    return new CryptoDevice(await owned(t))
  }

  /** POST over HTTPS to `/api/<path>`. */
  post(path: string, token: string | undefined, body: unknown): Promise<Answer> {
    return api(`${this.o.https}/api/${path}`, token, body)
  }

  async create(type: string, extra: Record<string, unknown> = {}): Promise<DeviceKey> {
    return this.keyFrom(
      await this.post('keymgmt/create', await this.tokens.get('keymgmt:gen'), { label: type, type, ...extra }),
    )
  }

  async import(type: string, pubkey: Uint8Array, extra: Record<string, unknown> = {}): Promise<DeviceKey> {
    const token = await this.tokens.get('keymgmt:imp')
    return this.keyFrom(await this.post('keymgmt/import', token, { label: type, type, pubkey: b64(pubkey), ...extra }))
  }

  /** The key an answer `{kid}` names, with its use token and public key. */
  async keyFrom(answer: Answer): Promise<DeviceKey> {
    if (answer.status !== 200) throw new Error(`refused: ${answer.status} ${answer.text}`)
    const kid = answer.json.kid as string
    const use = await login(this.o.base, `keymgmt:use:${kid}`)
    const got = await api(`${this.o.https}/api/keymgmt/get/${kid}`, use)
    return { kid, use, ...(got.json.pubkey ? { pubkey: bytesOf(got.json.pubkey) } : {}) }
  }

  /** The journal records of one LOG_TYPE, decoded. */
  async records(type: number) {
    return (await readJournal(this.o.device.dataDir)).records.filter((r) => r.type === type)
  }

  /**
   * The statuses of crypto-contract §0 on one route, each with its record: 200 OK, 400 ERROR and
   * 406 FAILED of the route's LOG_TYPE with source, rid and KID; 403 a FAILED_SCOPE_CHECK and no
   * record of its own. `valid` must answer 200, `malformed` 400, `failing` 406. 409 puts the
   * device in a fail state for good: call it last in a file, as `failState`.
   */
  async checkOutcomes(
    t: Test,
    path: string,
    logType: number,
    key: DeviceKey,
    cases: { valid: Record<string, unknown>; malformed: Record<string, unknown>; failing: Record<string, unknown> },
  ): Promise<void> {
    const expect: [string, number, string, Record<string, unknown>, number][] = [
      ['a valid request', 200, key.use, cases.valid, LogResult.OK],
      ['a malformed request', 400, key.use, cases.malformed, LogResult.ERROR],
      ['a failing request', 406, key.use, cases.failing, LogResult.FAILED],
    ]
    for (const [what, status, token, body, result] of expect) {
      const answer = await this.post(path, token, body)
      t.equal(answer.status, status, `${path}: ${what} → ${status} ${answer.text.slice(0, 120)}`)
      const rid = answer.headers['x-request-id']
      const mine = (await this.records(logType)).filter((r) => r.decoded?.rid === rid)
      t.equal(mine.length, 1, `${path}: ${what} journaled once`)
      t.equal(mine[0]?.result, result, `${path}: ${what} journaled with its result`)
      t.same(
        { source: mine[0]?.decoded?.source, kid: mine[0]?.decoded?.kid },
        { source: status, kid: key.kid },
        `${path}: ${what}: source and KID`,
      )
    }
    const other = await login(this.o.base, `keymgmt:use:${'0'.repeat(32)}`)
    const denied = await this.post(path, other, { ...cases.malformed, kid: key.kid })
    t.equal(denied.status, 403, `${path}: a token for another key → 403, before the 400 of a malformed field`)
    const rid = denied.headers['x-request-id']
    const all = (await readJournal(this.o.device.dataDir)).records.filter((r) => r.decoded?.rid === rid)
    t.same(
      all.map((r) => [r.type, r.decoded?.source]),
      [[LogType.FAILED_SCOPE_CHECK, 403]],
      `${path}: the 403 is journaled as FAILED_SCOPE_CHECK only`,
    )
  }

  /** Puts the device in a fail state (a temperature fault): every key route then answers 409, journaling nothing. */
  async failState(t: Test, path: string, logType: number, key: DeviceKey, valid: Record<string, unknown>) {
    await sendSimCommand(this.o.device.dataDir, { action: 'temperature', celsius: 95 })
    await until('fail state', async () => (await call(`${this.o.base}/api/system/status`)).json.fls_state !== 0)
    const before = (await this.records(logType)).length
    const answer = await this.post(path, key.use, valid)
    t.equal(answer.status, 409, `${path}: 409 in the fail state`)
    t.equal((await this.records(logType)).length, before, `${path}: a 409 is not journaled`)
  }
}

/** The device's digests (HMAC keys, the ECDH modes' `alg`) by node:crypto's names for them. */
export const DIGESTS = {
  'SHA2-256': 'sha256',
  'SHA2-384': 'sha384',
  'SHA2-512': 'sha512',
  'SHA3-256': 'sha3-256',
  'SHA3-384': 'sha3-384',
  'SHA3-512': 'sha3-512',
} as const

/** The curves of the ECDH modes and node:crypto's names for the SEC ones. */
export const ECDH_CURVES = ['CURVE25519', 'CURVE448', 'SECP256R1', 'SECP384R1', 'SECP521R1', 'SECP256K1'] as const
export type EcdhCurve = (typeof ECDH_CURVES)[number]
export const OPENSSL: Record<string, string> = {
  SECP256R1: 'prime256v1',
  SECP384R1: 'secp384r1',
  SECP521R1: 'secp521r1',
  SECP256K1: 'secp256k1',
}

/** A host key pair on a curve and its ECDH with a raw/compressed device public key, all in node:crypto. */
export function hostPeer(curve: EcdhCurve): { publicKey: Uint8Array; agree(devicePublic: Uint8Array): Buffer } {
  if (curve === 'CURVE25519' || curve === 'CURVE448') {
    const crv = curve === 'CURVE25519' ? 'X25519' : 'X448'
    const pair = crv === 'X25519' ? generateKeyPairSync('x25519') : generateKeyPairSync('x448')
    const x = pair.publicKey.export({ format: 'jwk' }).x!
    return {
      publicKey: new Uint8Array(Buffer.from(x, 'base64url')),
      agree: (devicePublic) => {
        const publicKey: KeyObject = createPublicKey({
          key: { kty: 'OKP', crv, x: Buffer.from(devicePublic).toString('base64url') },
          format: 'jwk',
        })
        return diffieHellman({ privateKey: pair.privateKey, publicKey })
      },
    }
  }
  const ecdh = createECDH(OPENSSL[curve]!)
  ecdh.generateKeys()
  return {
    publicKey: new Uint8Array(ecdh.getPublicKey(null, 'compressed')),
    agree: (devicePublic) => ecdh.computeSecret(devicePublic),
  }
}

/** `bytes` with one bit flipped. */
export function flipped(bytes: Uint8Array, index = 0): Uint8Array {
  const copy = Uint8Array.from(bytes)
  copy[index]! ^= 0x01
  return copy
}

// The known answers of test/vectors/ext-auth-v1.json (encedo/encedo-authenticator tests/vectors/v1.json) and
// test/vectors/ext-authreq-device.json ([C]) computed through one key provider: node's tap test gives it noble or
// WebCrypto, the Chromium page (helpers/webcrypto-page.ts) WebCrypto. Free of node, so that the page bundles it;
// every check is returned, not asserted, and tap asserts each one.
import {
  buildAuthreply,
  buildPairingReply,
  grantedScope,
  isPeriod,
  openEvent,
  pushTokenBody,
  readEventData,
  readPairingRequest,
  unpairBody,
  type ApprovalKeys,
  type KeyProvider,
} from '../../authenticator/browser.js'
import {
  extJwtSigned,
  fromBase64,
  hmacSha256,
  parseExtJwt,
  signExtJwt,
  toBase64,
  x25519Agree,
} from '../../protocol/browser.js'

export interface VectorCheck {
  name: string
  actual: unknown
  expected: unknown
}

/** test/vectors/ext-auth-v1.json's `vectors`, the parts the authenticator's checks read. */
export interface AppVectors {
  x25519: { name: string; seed?: string; public?: string; private?: string; peer_public?: string; shared?: string }[]
  pairing: {
    inputs: { request_payload: Record<string, unknown>; aid_seed: string; label: string; fid: string }
    expected: { reply: string; mac: string; post_body: unknown }
  }
  events: EventVector[]
  unpair: {
    inputs: { pid: string; aid: string; aid_prv: string; epk: string; nonce: string }
    expected: { post_body: unknown }
  }
  token_refresh: { inputs: { nonce: string; fid: string }; expected: { mac: string } }
}

interface EventVector {
  name: string
  inputs: {
    aid_prv: string
    eid: string
    pid: string
    event: unknown
    now: number
    writable?: boolean
    period_min: number
  }
  expected: { mac_valid: boolean; scope?: string; reply: { scope_sent: string; authreply: string; mac: string } }
}

/** test/vectors/ext-authreq-device.json: a real device's authreq and the keys that open it. */
export interface DeviceVector {
  EXT_FX_AUTHREQ: string
  EXT_FX_PID_B64: string
  EXT_FX_IDENTITY_PRIV_HEX: string
  EXT_FX_EID_HEX: string
  EXT_FX_SCOPE: string
}

type Check = (name: string, actual: unknown, expected: unknown) => void

const hex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16))
const utf8 = (text: string) => new TextEncoder().encode(text)

/** Every check of both vector files through `keys`: its name, what the provider computed, the known answer. */
export async function vectorChecks<H>(
  keys: KeyProvider<H>,
  v1: AppVectors,
  device: DeviceVector,
): Promise<VectorCheck[]> {
  const checks: VectorCheck[] = []
  const check = (name: string, actual: unknown, expected: unknown) => void checks.push({ name, actual, expected })
  const approvalKeys = async (prv: Uint8Array, eid: Uint8Array, pid: string): Promise<ApprovalKeys> => ({
    aidKey: (await keys.fromSeed(prv)).key,
    eid,
    pid,
    cipher: keys,
  })

  for (const vector of v1.x25519) {
    const { name, seed, private: prv = '', peer_public: peer = '', shared = '' } = vector
    if (seed) {
      const { key } = await keys.fromSeed(fromBase64(seed))
      check(`x25519 "${name}": the public key`, toBase64(key.aid), vector.public)
      continue
    }
    const agreed = await (await keys.fromSeed(fromBase64(prv))).key.agree(fromBase64(peer))
    const probe = utf8('probe')
    // An agreed key never shows its bytes: it shows them by what it computes, HMAC under the shared secret.
    check(
      `x25519 "${name}": the agreed key is HMAC under the shared secret`,
      toBase64(await agreed.hmac(probe)),
      toBase64(hmacSha256(fromBase64(shared), probe)),
    )
  }

  const { inputs, expected } = v1.pairing
  // A request as a device sends it, signed with a key the authenticator cannot know (it reads it unverified).
  const request = readPairingRequest(signExtJwt(inputs.request_payload, new Uint8Array(32).fill(7)), 0)
  const reply = await buildPairingReply(
    request,
    (await keys.fromSeed(fromBase64(inputs.aid_seed))).key,
    inputs.label,
    inputs.fid,
  )
  check('pairing: the reply', reply.reply, expected.reply)
  check('pairing: its mac', reply.mac, expected.mac)
  check('pairing: the post body, keys in the vector order', JSON.stringify(reply), JSON.stringify(expected.post_body))

  for (const event of v1.events)
    await eventChecks(
      event,
      await approvalKeys(fromBase64(event.inputs.aid_prv), fromBase64(event.inputs.eid), event.inputs.pid),
      check,
    )

  const first = v1.events[0]!
  const firstKeys = await approvalKeys(fromBase64(first.inputs.aid_prv), fromBase64(first.inputs.eid), 'p')
  const data = readEventData(first.inputs.event)!
  const opened = await openEvent(data, firstKeys, first.inputs.now)
  check('the key hint of a keymgmt:use scope', opened?.key, { type: '0221', label: 'PGP main' })
  check('a keymgmt:use scope has no write switch', opened?.writeSwitch, false)
  check('an event opens until its exp', (await openEvent(data, firstKeys, data.exp)) !== undefined, true)
  check('an event past its exp does not', await openEvent(data, firstKeys, data.exp + 1), undefined)

  const unpair = v1.unpair
  const proof = {
    pid: unpair.inputs.pid,
    aidKey: (await keys.fromSeed(fromBase64(unpair.inputs.aid_prv))).key,
    epk: fromBase64(unpair.inputs.epk),
    nonce: fromBase64(unpair.inputs.nonce),
  }
  check(
    'unpair: the body, keys in the vector order',
    JSON.stringify(await unpairBody(proof)),
    JSON.stringify(unpair.expected.post_body),
  )
  const refresh = v1.token_refresh
  const token = await pushTokenBody({ ...proof, nonce: fromBase64(refresh.inputs.nonce), fid: refresh.inputs.fid })
  check('push token: the mac', token.mac, refresh.expected.mac)
  check(
    'push token: the body',
    JSON.stringify(token),
    JSON.stringify({
      pid: unpair.inputs.pid,
      aid: unpair.inputs.aid,
      fid: refresh.inputs.fid,
      nonce: refresh.inputs.nonce,
      mac: refresh.expected.mac,
    }),
  )

  const claims = parseExtJwt(device.EXT_FX_AUTHREQ).payload as {
    jti: string
    aud: string
    exp: number
    iat: number
    scope: Record<string, string>
  }
  // The broker gives each phone its own entry with the authreq's jti, aud and exp (§3.5.2).
  const entry = readEventData({
    jti: claims.jti,
    scope: claims.scope[device.EXT_FX_PID_B64],
    epk: claims.aud,
    exp: claims.exp,
  })!
  const deviceKeys = await approvalKeys(
    hex(device.EXT_FX_IDENTITY_PRIV_HEX),
    hex(device.EXT_FX_EID_HEX),
    device.EXT_FX_PID_B64,
  )
  check(
    "a real device's authreq entry opens",
    (await openEvent(entry, deviceKeys, claims.iat))?.scope,
    device.EXT_FX_SCOPE,
  )

  let refused = 'agreed'
  await firstKeys.aidKey.agree(new Uint8Array(32)).catch((err: Error) => void (refused = err.name))
  check('a small-order peer key (u = 0) is refused', refused, 'ExtAuthKeyError')
  return checks
}

async function eventChecks(
  event: EventVector,
  keys: ApprovalKeys,
  check: (name: string, actual: unknown, expected: unknown) => void,
): Promise<void> {
  const { inputs, expected } = event
  const name = `event "${event.name}"`
  const opened = await openEvent(readEventData(inputs.event)!, keys, inputs.now)
  if (!expected.mac_valid) return check(`${name}: a bad tag is refused silently`, opened, undefined)
  check(`${name}: the scope`, opened?.scope, expected.scope)
  if (!opened) return
  const scope = grantedScope(opened, inputs.writable)
  check(`${name}: the scope sent`, scope, expected.reply.scope_sent)
  const period = inputs.period_min * 60
  if (!isPeriod(period)) return check(`${name}: the period`, period, 'one of EXT_PERIODS')
  const answer = await buildAuthreply(opened, keys, { scope, period, now: inputs.now })
  check(`${name}: the authreply`, answer.authreply, expected.reply.authreply)
  check(`${name}: its mac`, answer.mac, expected.reply.mac)
  // The device's check (§1.5 step 4): HS256 over the received bytes with S_pair, by noble from the raw key.
  const sPair = x25519Agree(fromBase64(inputs.aid_prv), keys.eid)
  check(`${name}: the device's check of the authreply holds`, extJwtSigned(parseExtJwt(answer.authreply), sPair), true)
}

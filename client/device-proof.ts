import type { BrokerClient, DeviceProof } from './broker-client.js'
import type { DeviceJson } from './device-json.js'
import { UnexpectedAnswerError } from './errors.js'
import { extMac } from './ext-auth-calls.js'

/**
 * The device's proof for the broker's `subscribers/*` (ext-auth-contract §3.4.7): a key bound to its eid, and its
 * `ext/mac` over a fresh nonce with it. Good once: each call to the broker needs a new one.
 */
export async function deviceProof(device: DeviceJson, broker: BrokerClient, eid: string): Promise<DeviceProof> {
  const { epk } = await broker.deviceSession(eid)
  const proof = await extMac(device, epk)
  if (proof.eid !== eid) throw new UnexpectedAnswerError('the device answered ext/mac for another eid than its own')
  return { ...proof, epk }
}

import { randomBytes } from 'node:crypto'
import type { CloudState } from './types.js'

const KEY = 'broker-master'

/**
 * The broker's master secret (its session keys derive from it, ext-auth contract §3.4.1): made
 * once, by whichever instance of the cluster asks first, and then read by all. `create` fails for
 * every instance but one, so two instances starting together still agree.
 */
export async function masterSecret(state: CloudState): Promise<Uint8Array> {
  const kv = await state.bucket('secrets')
  const stored = await kv.get(KEY)
  if (stored?.operation === 'PUT') return stored.value
  try {
    const fresh = new Uint8Array(randomBytes(32))
    await kv.create(KEY, fresh)
    return fresh
  } catch (err) {
    const winner = await kv.get(KEY)
    if (winner?.operation === 'PUT') return winner.value
    throw err
  }
}

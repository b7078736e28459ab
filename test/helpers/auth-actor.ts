import type { Test } from 'tap'
import { AuthActor } from '../../actors/auth/auth-actor.js'
import type { JournalPort } from '../../actors/host/journal-port.js'
import type { ScriptedIdentity } from './scripted-identity.js'
import { silentLogger } from './logger.js'

/**
 * The real auth actor on a scripted identity's HAL and bus, with an empty history and no
 * operations of its own (the test calls the endpoints with it); stopped when the test ends.
 */
export async function authActorOn(
  t: Test,
  { hal, connect }: Pick<ScriptedIdentity, 'hal' | 'connect'>,
  { journal, reboot = async () => {} }: { journal: JournalPort; reboot?: () => Promise<void> },
): Promise<AuthActor> {
  const actor = new AuthActor(
    {
      nc: await connect('auth'),
      hal,
      journal,
      history: { records: [], intact: true, problems: [] },
      logger: silentLogger,
      reboot,
      checkinOrder: async () => {},
    },
    () => ({}),
  )
  t.teardown(() => actor.stop())
  return actor
}

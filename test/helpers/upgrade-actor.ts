import type { Test } from 'tap'
import type { JournalPort } from '../../actors/host/journal-port.js'
import { UpgradeActor } from '../../actors/upgrade/upgrade-actor.js'
import type { ReadModelBus } from '../../bus/read-model-bus.js'
import { silentLogger } from './logger.js'
import type { ScriptedIdentity } from './scripted-identity.js'

/** The real upgrade actor on a scripted identity's HAL and bus with `journal`, and the gateway's view of it. */
export async function upgradeActorOn(
  t: Test,
  { hal, connect, gatewayView }: Pick<ScriptedIdentity, 'hal' | 'connect' | 'gatewayView'>,
  journal: JournalPort,
): Promise<{ upgrade: UpgradeActor; gateway: ReadModelBus }> {
  const upgrade = new UpgradeActor({ nc: await connect('upgrade'), hal, journal, logger: silentLogger })
  await upgrade.start()
  t.teardown(() => upgrade.stop())
  const gateway = await gatewayView(['upgrade'])
  await gateway.whenReady()
  return { upgrade, gateway }
}

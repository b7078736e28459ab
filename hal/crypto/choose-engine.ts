import { runKats, type KatResult } from './kats.js'
import { nativeEngine } from './native-engine.js'
import { nobleEngine } from './noble-engine.js'
import type { CryptoEngine } from './types.js'

export interface EngineChoice {
  engine: CryptoEngine
  /** The KAT failures of `engine`; non-empty means the device must raise fls bit 0x01. */
  failed: string[]
  kats: { native: KatResult; noble: KatResult }
}

/**
 * Runs the KATs on both engines (at boot) and picks native, the fast one, when it passes;
 * otherwise noble, even if noble fails too, since it is the only other choice.
 */
export function chooseEngine(
  engines: { native: CryptoEngine; noble: CryptoEngine } = { native: nativeEngine, noble: nobleEngine },
): EngineChoice {
  const kats = { native: runKats(engines.native), noble: runKats(engines.noble) }
  return kats.native.ok
    ? { engine: engines.native, failed: kats.native.failed, kats }
    : { engine: engines.noble, failed: kats.noble.failed, kats }
}

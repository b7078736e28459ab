import { runKats, type KatResult } from './kats.js'
import { nativeEngine } from './native-engine.js'
import { nobleEngine } from './noble-engine.js'
import type { CryptoEngine } from './types.js'

export interface EngineChoice {
  engine: CryptoEngine
  /** The KAT failures of `engine`; non-empty means the device must raise fls bit 0x01. */
  failed: string[]
  /** noble's result appears once its KATs have run (later, when `later` deferred them). */
  kats: { native: KatResult; noble?: KatResult }
}

/**
 * Runs the KATs on both engines (at boot) and picks native, the fast one, when it passes;
 * otherwise noble, even if noble fails too, since it is the only other choice. When native
 * passes, noble's KATs (about 0.4 s of pure-JS curve arithmetic) only tell whether the fallback
 * is sound, so they may go to `later`, off the boot's critical path.
 */
export function chooseEngine(
  engines: { native: CryptoEngine; noble: CryptoEngine } = { native: nativeEngine, noble: nobleEngine },
  later: (run: () => void) => void = (run) => run(),
): EngineChoice {
  const native = runKats(engines.native)
  if (!native.ok) {
    const noble = runKats(engines.noble)
    return { engine: engines.noble, failed: noble.failed, kats: { native, noble } }
  }
  const choice: EngineChoice = { engine: engines.native, failed: [], kats: { native } }
  later(() => (choice.kats.noble = runKats(engines.noble)))
  return choice
}

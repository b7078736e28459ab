import { runKats, runKatsStepwise, type KatResult } from './kats.js'
import { nativeEngine } from './native-engine.js'
import { nobleEngine } from './noble-engine.js'
import { postQuantum as defaultPostQuantum } from './post-quantum.js'
import { runPostQuantumKats } from './pq-kats.js'
import type { CryptoEngine, PostQuantum } from './types.js'

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * The KATs off the boot path run once per implementation in a process: they test the code loaded,
 * which services restarted in the same process (a reboot) still run. noble's own suite beside a
 * native engine that passed only says whether the fallback is sound; the deferred ones (native's
 * signatures, HMAC and wrap, the shared EdDSA variants, ML-KEM and ML-DSA) keep their verdict, a
 * failure included, for every boot of the process. The boot's own KATs run at every boot, and a
 * boot that falls back to noble runs noble's whole suite again first.
 */
const verdicts = {
  fallback: new WeakMap<CryptoEngine, Promise<KatResult>>(),
  late: new WeakMap<CryptoEngine, KatResult>(),
  shared: new WeakMap<CryptoEngine, KatResult>(),
  postQuantum: new WeakMap<PostQuantum, KatResult>(),
}

function verdictOf<K extends object, V>(verdicts: WeakMap<K, V>, implementation: K, run: () => V): V {
  let verdict = verdicts.get(implementation)
  if (verdict === undefined) {
    verdict = run()
    verdicts.set(implementation, verdict)
  }
  return verdict
}

export interface EngineChoice {
  engine: CryptoEngine
  /**
   * The KAT failures of `engine` and of the code it shares with noble and the post-quantum
   * implementation; non-empty means the device must raise fls bit 0x01. Late failures (see
   * `onLateFailure`) are appended.
   */
  failed: string[]
  /**
   * noble's and the post-quantum results appear once their KATs have run (`later`, if deferred;
   * noble's whole suite always goes to `later`, `settle` runs only its shared part).
   */
  kats: { native: KatResult; noble?: KatResult; postQuantum?: KatResult }
  /**
   * Runs now the deferred KATs of code the chosen engine uses (its signatures, HMAC and key
   * wrap, the shared EdDSA variants, ML-KEM/ML-DSA), unless they have run: whoever is about to
   * use that code calls it first, so that nothing runs on code that has not passed its KATs.
   * noble's own KATs, which only tell whether the fallback is sound, stay with `later`.
   */
  settle(): void
}

export interface ChooseEngineOptions {
  postQuantum?: PostQuantum
  /**
   * Given, the KATs of the code no boot path uses (the native engine's signatures, HMAC and key
   * wrap; the code one implementation serves whichever engine is chosen: ML-KEM, ML-DSA and the
   * EdDSA variants native hands to noble) go to `settle` and `later`, and their failures come
   * here; absent, they run now. Their first run costs 0.4–0.6 s of JIT and table building, many
   * times the boot's own KATs (AES, ECDH, HKDF: about 30 ms).
   */
  onLateFailure?: (failed: string[]) => void
}

/**
 * Runs the KATs on both engines (at boot) and picks native, the fast one, when it passes;
 * otherwise noble, even if noble fails too, since it is the only other choice. When native
 * passes, noble's KATs only tell whether the fallback is sound, so they may go to `later`, off
 * the boot's critical path. A failure in shared code, which the chosen engine runs, counts as
 * the engine's own.
 */
export function chooseEngine(
  engines: { native: CryptoEngine; noble: CryptoEngine } = { native: nativeEngine, noble: nobleEngine },
  later: (run: () => Promise<void>) => void = (run) => void run(),
  { postQuantum = defaultPostQuantum, onLateFailure }: ChooseEngineOptions = {},
): EngineChoice {
  const deferring = onLateFailure !== undefined
  const native = runKats(engines.native, { shared: !deferring, late: !deferring })
  if (!native.ok) {
    const noble = runKats(engines.noble)
    const pq = runPostQuantumKats(postQuantum)
    const failed = [...noble.failed, ...pq.failed]
    return { engine: engines.noble, failed, kats: { native, noble, postQuantum: pq }, settle: () => undefined }
  }
  const choice: EngineChoice = { engine: engines.native, failed: [], kats: { native }, settle: () => undefined }
  if (onLateFailure === undefined) {
    choice.kats.postQuantum = runPostQuantumKats(postQuantum)
    choice.failed.push(...choice.kats.postQuantum.failed)
  }
  let settled = false
  choice.settle = () => {
    if (settled || !deferring) return
    settled = true
    const late = verdictOf(verdicts.late, engines.native, () =>
      runKats(engines.native, { shared: false, late: 'only' }),
    )
    const shared = verdictOf(verdicts.shared, engines.noble, () => runKats(engines.noble, { own: false }))
    const pq = verdictOf(verdicts.postQuantum, postQuantum, () => runPostQuantumKats(postQuantum))
    choice.kats.postQuantum = pq
    const failed = [...late.failed, ...shared.failed, ...pq.failed]
    if (failed.length === 0) return
    choice.failed.push(...failed)
    onLateFailure!(failed)
  }
  // noble's whole suite (about a second of pure JS) yields between KATs: the device serves meanwhile.
  later(async () => {
    choice.settle()
    choice.kats.noble = await verdictOf(verdicts.fallback, engines.noble, () =>
      runKatsStepwise(engines.noble, nextTurn),
    )
  })
  return choice
}

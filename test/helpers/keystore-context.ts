// The key store's operations without a bus or an actor: a real repository on sim media, the
// native engine, and a journal the test holds, so that it can interleave operations at will.
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import type { Test } from 'tap'
import { ExpandedKeys } from '../../actors/keystore/crypto-expanded-keys.js'
import type { JournalPort } from '../../actors/host/journal-port.js'
import { KeyLifecycles } from '../../actors/keystore/key-lifecycles.js'
import { KeyRepository } from '../../actors/keystore/key-repository.js'
import type { KeystoreContext } from '../../actors/keystore/keystore-context.js'
import { type CryptoEngine, nativeEngine, postQuantum } from '../../hal/index.js'
import { FileKeySlotMedia } from '../../hal/sim/key-slot-media.js'
import type { CommandReply, CommandRequest } from '../../protocol/bus-messages.js'
import type { JournalEntry } from '../../protocol/journal.js'
import { testSealer } from './test-sealer.js'

export interface TestKeystore {
  actor: KeystoreContext
  /** Every entry journaled, in order. */
  journaled: JournalEntry[]
  /** The requests `denied` refused (the 403 of a scope check). */
  denials: CommandRequest[]
  /** A request as the guard admits it: TLS, a principal with `scope`, the body. */
  req(scope: string, body: unknown, rid?: string): CommandRequest
  /** A crypto operation's request: the gateway forwards its body raw. */
  raw(scope: string, body: unknown, rid?: string): CommandRequest
  /** The key store as the next boot opens it from the same media, journaling to the same journal. */
  reboot(): Promise<KeystoreContext>
}

export interface TestKeystoreOptions {
  engine?: CryptoEngine
  /** Runs before each append is recorded: a test may hold an append back, or refuse it. */
  beforeAppend?: (entries: JournalEntry[]) => Promise<void>
}

/** A journal port for the key machines' runners, whose records go to `append`: nothing else of the port is used. */
export function appendOnly(append: (entries: JournalEntry[]) => Promise<void>): JournalPort {
  return { append: async (entries: JournalEntry[]) => (await append(entries), []) } as unknown as JournalPort
}

export async function testKeystore(t: Test, options: TestKeystoreOptions = {}): Promise<TestKeystore> {
  const media = new FileKeySlotMedia(t.testdir(), { slotCount: 64 })
  t.teardown(() => media.close())
  const open = (
    (sealer) => () =>
      KeyRepository.open({ media, sealer, devid: '0123456789abcdef' })
  )(testSealer())
  const repository = await open()
  const journaled: JournalEntry[] = []
  const denials: CommandRequest[] = []
  const expanded = new ExpandedKeys()
  const append = async (entries: JournalEntry[]) => {
    await options.beforeAppend?.(entries)
    journaled.push(...entries)
  }
  const journal = appendOnly(append)
  const actor: KeystoreContext = {
    engine: options.engine ?? nativeEngine,
    pqc: postQuantum,
    expanded,
    repository,
    keys: new KeyLifecycles(journal, repository),
    random: (n: number) => Uint8Array.from(randomBytes(n)),
    guard: undefined as unknown as KeystoreContext['guard'],
    logger: pino({ level: 'silent' }),
    identityState: undefined,
    now: () => 1_700_000_000,
    publish: () => expanded.retain((kid) => repository.has(kid)),
    unavailable: () => undefined,
    denied: async (req): Promise<CommandReply> => {
      denials.push(req)
      return { status: 403, body: { error: 'forbidden' } }
    },
    journal: append,
  }
  let n = 0
  const req = (scope: string, body: unknown, rid = `r-${++n}`): CommandRequest => ({
    rid,
    tls: true,
    principal: { sub: 'U', scope },
    body,
  })
  const raw = (scope: string, body: unknown, rid?: string) =>
    req(scope, { raw: typeof body === 'string' ? body : JSON.stringify(body) }, rid)
  // Another actor over the same media and journal, as the next boot builds it; the old one is left as it is.
  const reboot = async (): Promise<KeystoreContext> => {
    const reopened = await open()
    const fresh = new ExpandedKeys()
    return {
      ...actor,
      repository: reopened,
      keys: new KeyLifecycles(journal, reopened),
      expanded: fresh,
      publish: () => fresh.retain((kid) => reopened.has(kid)),
    }
  }
  return { actor, journaled, denials, req, raw, reboot }
}

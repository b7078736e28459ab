// hem-audit replay rebuilds every key's lifecycle machine (audit/key-replay.ts): from the key store's
// TRANSITION records, from the KEY_* records of builds older than the machine, and across boots.
import t from 'tap'
import { replayDevice } from '../audit/index.js'
import { Journal, JournalReplayError } from '../eventstore/index.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { type JournalEntry, LogResult, LogType } from '../protocol/journal.js'
import { deviceBanner, fixedClock, options, readSet, signer, START, transition } from './helpers/journal-fixtures.js'

const OLD = 'a'.repeat(32)
const RETIRED = 'b'.repeat(32)
const DAMAGED = 'c'.repeat(32)

const key = (from: string, to: string, event: string, kid: string) => transition('key', from, to, event, kid)
const record = (type: number, kid: string, result: JournalEntry['result'] = LogResult.OK): JournalEntry => ({
  type,
  result,
  subject: 'U',
  data: { source: 200, rid: 'r', kid, type: 'AES256' },
})
const startup: JournalEntry = { type: LogType.STARTUP, result: LogResult.OK, data: { fwv: '1.0.0', slot: 'A', fls: 0 } }

/** Writes one closed journal file per boot, each boot's appends as given; answers the files and each boot's id. */
async function journal(dir: string, boots: JournalEntry[][][]) {
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  const ids: string[] = []
  for (const appends of boots) {
    clock.advance(60_000)
    const open = await Journal.open(options(media, { clock }, deviceBanner('P')))
    for (const entries of [[startup], ...appends]) await open.append(entries)
    await open.close()
    ids.push((await media.list()).at(-1)!)
  }
  return { files: await readSet(media), ids }
}

t.test("every key's state: old builds' records, this build's transitions, and a power-up between", async (t) => {
  const { files, ids } = await journal(t.testdir(), [
    [
      // A build before the key machine: the key's records alone.
      [record(LogType.KEY_GENERATION, OLD)],
      [key('created', 'in_service', 'ADD', RETIRED), record(LogType.KEY_GENERATION, RETIRED)],
      // Its deletion never journaled: the power-up finds the key stored and in service again.
      [key('in_service', 'deleting', 'RETIRE', RETIRED)],
      [key('created', 'in_service', 'ADD', DAMAGED), record(LogType.KEY_GENERATION, DAMAGED)],
      [key('in_service', 'invalid', 'INVALIDATED', DAMAGED)],
    ],
    [
      [key('in_service', 'deleting', 'RETIRE', OLD)],
      [key('deleting', 'deleted', 'DELETE', OLD), record(LogType.KEY_DELETE, OLD)],
      [key('in_service', 'deleting', 'RETIRE', RETIRED)],
    ],
  ])
  // Each boot's records are a minute after the one before it, from START.
  const firstBoot = replayDevice(files, signer.publicKey, { at: { time: START / 1000 + 60 } })
  t.equal(firstBoot.at.file, ids[0], 'as of the end of boot 1')
  t.same(firstBoot.keyStates, { [OLD]: 'in_service', [RETIRED]: 'deleting', [DAMAGED]: 'invalid' }, 'boot 1')
  const end = replayDevice(files, signer.publicKey)
  t.same(end.keyStates, { [RETIRED]: 'deleting', [DAMAGED]: 'invalid' }, 'boot 2: the old key deleted by this build')
  t.same(Object.keys(end.keys).sort(), [RETIRED, DAMAGED].sort(), 'the catalogue agrees on the keys stored')
})

t.test("an old build's failed creation and deletion, derived through the machine", async (t) => {
  const { files } = await journal(t.testdir(), [
    [
      [record(LogType.KEY_GENERATION, OLD)],
      [record(LogType.KEY_GENERATION, OLD, LogResult.ERROR)],
      [record(LogType.KEY_IMPORT, RETIRED)],
      [record(LogType.KEY_DELETE, RETIRED)],
      // The same KID again (a public key imported once more): a new key, by this build.
      [key('created', 'in_service', 'ADD', RETIRED), record(LogType.KEY_IMPORT, RETIRED)],
    ],
  ])
  t.same(replayDevice(files, signer.publicKey).keyStates, { [RETIRED]: 'in_service' })
})

t.test('a key transition the machine does not take fails the replay', async (t) => {
  const cases: [string, JournalEntry[], RegExp][] = [
    ['a deletion never retired', [key('in_service', 'deleted', 'DELETE', RETIRED)], /from in_service while in created/],
    [
      'deleted twice',
      [
        key('created', 'in_service', 'ADD', RETIRED),
        key('in_service', 'deleting', 'RETIRE', RETIRED),
        key('deleting', 'deleted', 'RETIRE', RETIRED),
      ],
      /RETIRE leads from deleting to deleting, not deleted/,
    ],
    ['an invalid key used again', [key('invalid', 'in_service', 'BOOT', DAMAGED)], /from invalid while in created/],
    ['no KID', [transition('key', 'created', 'in_service', 'ADD')], /names no KID/],
  ]
  for (const [name, entries, message] of cases) {
    const { files } = await journal(t.testdir(), [[entries]])
    t.throws(() => replayDevice(files, signer.publicKey), JournalReplayError, name)
    t.throws(() => replayDevice(files, signer.publicKey), message, `${name}: says why`)
  }
})

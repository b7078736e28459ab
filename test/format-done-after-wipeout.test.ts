// A wipeout while the disks of a new owner are formatted: the format's end finds the device fresh
// again, and that is no failure. The personalisation runner is real; the rest of the auth actor is
// what a DiskFormat uses of it.
import t from 'tap'
import { DiskFormat, type FormatContext } from '../actors/auth/disk-format.js'
import type { JournalPort } from '../actors/host/journal-port.js'
import { type JournalEntry, LogType } from '../protocol/journal.js'
import { noHead } from './helpers/journal.js'
import { personalisationRunner } from './helpers/runners.js'

async function formattingDevice() {
  const transitions: string[] = []
  const formatRecords: unknown[] = []
  const journal: JournalPort = {
    // Slow, as a busy group commit is: a send waits here while the next one is asked for.
    append: async (entries: JournalEntry[]) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      for (const e of entries) {
        if (e.type === LogType.TRANSITION) transitions.push(`${e.data?.from} -> ${e.data?.to}`)
        if (e.type === LogType.DISK_FORMAT) formatRecords.push(e.data?.phase)
      }
      return entries.map((_, seq) => ({ file: '00000001', seq }))
    },
    status: async () => ({ fileId: '00000001', intact: true }),
    head: noHead,
  }
  const personalisation = personalisationRunner(journal)
  await personalisation.send({ type: 'PERSONALISE' })
  transitions.length = 0
  const logged: { level: string; msg: string }[] = []
  const log = (level: string) => (_: unknown, msg?: string) => void logged.push({ level, msg: msg ?? String(_) })
  const actor = {
    hal: {
      storage: { disk0Sectors: 64, disk1Sectors: 64 },
      disks: { format: async (_: number, progress: (percent: number) => void) => progress(100) },
    },
    config: {},
    format: undefined as string | undefined,
    personalisation,
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    publish: () => undefined,
    journal: async (entries: JournalEntry[]) => void (await journal.append(entries)),
  }
  /** As the wipeout of config_set does: the machine first, then the status it shows. */
  const wipeout = async () => {
    await personalisation.send({ type: 'WIPEOUT' })
    actor.format = undefined
  }
  /** Starts a format as personalisation does; resolves once it has ended (this card takes no cancel). */
  const format = () => {
    const disks = new DiskFormat(actor as unknown as FormatContext)
    disks.start('personalisation')
    return disks.cancel('stop')
  }
  return { actor, transitions, formatRecords, logged, wipeout, format }
}

t.test('FORMAT_DONE after a wipeout that was being journaled: wiped meanwhile, no failure', async (t) => {
  const { actor, transitions, formatRecords, logged, wipeout, format } = await formattingDevice()
  const wiped = wipeout()
  t.ok(actor.personalisation.can({ type: 'FORMAT_DONE' }), 'the wipeout is not adopted yet')
  await format()
  await wiped
  t.same(transitions, ['formatting -> fresh'], 'only the wipeout is journaled')
  t.same(formatRecords, ['start'], 'the format started, and finished nothing')
  t.same(
    logged.filter((l) => l.level === 'error'),
    [],
    'no failure logged',
  )
  t.equal(actor.format, undefined, 'the status shows no format: neither done nor failed')
  t.ok(actor.personalisation.matches('fresh'))
})

t.test('a format that ends after the wipeout has been made finishes nothing and shows no format', async (t) => {
  const { actor, transitions, logged, wipeout, format } = await formattingDevice()
  let formatted!: () => void
  let started!: () => void
  const writing = new Promise<void>((resolve) => (started = resolve))
  actor.hal.disks.format = async (_, progress) => {
    started()
    await new Promise<void>((resolve) => (formatted = resolve))
    progress(100)
  }
  const formatting = format()
  await writing
  await wipeout()
  formatted()
  await formatting
  t.same(transitions, ['formatting -> fresh'])
  t.same(
    logged.filter((l) => l.level === 'error'),
    [],
  )
  t.equal(actor.format, undefined, 'a wiped device has no formatted disks to show')
})

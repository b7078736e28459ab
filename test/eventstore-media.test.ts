import { stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = []
  for await (const chunk of chunks) parts.push(chunk)
  return Buffer.concat(parts).toString('utf8')
}

t.test('segments are files <id>.log, appended durably', async (t) => {
  const dir = join(t.testdir(), 'journal')
  const media = new FileJournalMedia(dir)
  t.same(await media.list(), [], 'a missing directory has no segments')
  const handle = await media.open('65a1b2c3')
  t.equal(handle.size, 0)
  t.equal(
    (await stat(join(dir, '65a1b2c3.log'))).mode & 0o777,
    0o640,
    "the journal's group (the core services) reads it",
  )
  await handle.append(Buffer.from('hello\n'))
  await handle.append(Buffer.from('world\n'))
  t.equal(handle.size, 12)
  t.equal(Buffer.from(await media.read('65a1b2c3')).toString(), 'hello\nworld\n')
  await handle.truncate(6)
  t.equal(handle.size, 6)
  await handle.append(Buffer.from('again\n'))
  t.equal(Buffer.from(await media.read('65a1b2c3')).toString(), 'hello\nagain\n')
  await handle.close()

  const reopened = await media.open('65a1b2c3')
  t.equal(reopened.size, 12, 'reopening keeps the content')
  await reopened.append(Buffer.from('more\n'))
  await reopened.close()
  t.equal(await collect(media.stream('65a1b2c3')), 'hello\nagain\nmore\n')
  t.equal(await collect(media.stream('65a1b2c3', 5)), 'hello')
  t.equal(await collect(media.stream('65a1b2c3', 0)), '')
})

t.test('list is ascending and ignores other names', async (t) => {
  const dir = t.testdir({
    '65a1b2c4.log': '',
    '00000001.log': '',
    '65a1b2c3.log': '',
    'ABCDEF01.log': '',
    '1234567.log': '',
    '123456789.log': '',
    'notes.txt': '',
    '65a1b2c5.log.tmp': '',
  })
  t.same(await new FileJournalMedia(dir).list(), ['00000001', '65a1b2c3', '65a1b2c4'])
})

t.test('ids that are not 8 lowercase hex chars are refused', async (t) => {
  const dir = t.testdir()
  await writeFile(join(dir, 'secret'), 'x')
  const media = new FileJournalMedia(dir)
  for (const id of ['../secret', 'ABCDEF01', '1234567', '123456789', '0000000g', '']) {
    await t.rejects(media.open(id), TypeError, `open ${JSON.stringify(id)}`)
    await t.rejects(media.read(id), TypeError, `read ${JSON.stringify(id)}`)
    await t.rejects(collect(media.stream(id)), TypeError, `stream ${JSON.stringify(id)}`)
  }
})

// Records no seal or signed head covers are unverified (issue 22, item 11, the verifier's side):
// a record appended after the last seal with a valid MAC (the file key is in the file) is a
// problem, replay and timeline never fold it, and a signed head vouches for the device's own tail
// and shows a cut end offline.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { LogType } from '../protocol/journal.js'
import { runCli } from './helpers/cli-output.js'
import { forgedLine, signedHeadOf, signer, writeDeviceJournal } from './helpers/journal-fixtures.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')
const run = (...argv: string[]) => runCli(main, argv)

/** A device's journal whose newest file is open, and its signed head saved beside it as `head.json`. */
async function openJournal(root: string): Promise<{ dir: string; head: string; newest: string }> {
  const dir = join(root, 'journal')
  await writeDeviceJournal(dir, true)
  const media = new FileJournalMedia(dir)
  const signed = await signedHeadOf(media)
  const head = join(root, 'head.json')
  await writeFile(head, JSON.stringify(signed))
  return { dir, head, newest: join(dir, `${signed.file}.log`) }
}

t.test("an open file's records after its last seal are unverified unless a signed head covers them", async (t) => {
  const { dir, head, newest } = await openJournal(t.testdir())
  const open = await run('verify', '--allow-open', '--key', KEY, dir)
  t.equal(open.code, 1)
  t.match(open.stdout, `${newest}:seq 4: unverified: no seal or signed head covers this record`)
  t.match(open.stdout, /FAILED: 5 problem\(s\)\n$/, 'one per record after the last seal')
  const covered = await run('verify', '--allow-open', '--head', head, '--key', KEY, dir)
  // The fixture's device saw its temperature out of range once: verified, with that told (exit 6).
  t.equal(covered.code, 6, covered.stdout)
  t.match(covered.stdout, /\nOK, with 1 non-secure state record\(s\)\n$/)
  const replayed = await run('replay', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(replayed.code, 0, replayed.stderr)
  const refused = await run('replay', '--allow-open', '--key', KEY, dir)
  t.equal(refused.code, 1, 'replay refuses unverified records')
  t.match(refused.stderr, 'nothing in them is replayed')
  const strict = await run('verify', '--head', head, '--key', KEY, dir)
  t.equal(strict.code, 1, 'a signed head does not close the file: --allow-open still says it may be open')
})

t.test('a forged record after the signed head is unverified, and never replayed or told', async (t) => {
  const { dir, head, newest } = await openJournal(t.testdir())
  const forged = forgedLine(await readFile(newest), {
    type: LogType.CONFIG_UPDATED,
    data: { source: 200, rid: 'x', changed: { email: 'mallory@example.com' } },
  })
  await writeFile(newest, forged)
  const verified = await run('verify', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(verified.code, 1)
  t.match(verified.stdout, `${newest}:seq 5: unverified`)
  t.match(verified.stdout, /FAILED: 1 problem\(s\)\n$/)
  const replayed = await run('replay', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(replayed.code, 1)
  t.notMatch(replayed.stdout + replayed.stderr, 'mallory')
  const told = await run('timeline', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(told.code, 1)
  t.notMatch(told.stdout + told.stderr, 'mallory')
})

t.test('files that stop short of the signed head were cut at their end', async (t) => {
  const { dir, head, newest } = await openJournal(t.testdir())
  const lines = (await readFile(newest, 'utf8')).split('\n')
  await writeFile(newest, lines.slice(0, -3).concat('').join('\n'))
  const cut = await run('verify', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(cut.code, 1)
  t.match(
    cut.stdout,
    /the signed head of .*head\.json is at \S+:seq 4, but the file has no such record: records were removed/,
  )

  await rm(newest)
  const deleted = await run('verify', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(deleted.code, 1)
  t.match(deleted.stdout, /but the files end before it .*: the journal was cut at its end/)
})

t.test('--head takes the whole logger key answer; a forged or malformed head is refused', async (t) => {
  const root = t.testdir()
  const { dir, head } = await openJournal(root)
  const signed = JSON.parse(await readFile(head, 'utf8'))
  const answer = join(root, 'key-answer.json')
  await writeFile(answer, JSON.stringify({ key: KEY, nonce: 'AAAA', nonce_signed: 'AAAA', head: signed }))
  t.equal((await run('verify', '--allow-open', '--head', answer, '--key', KEY, dir)).code, 6)

  const other = join(root, 'forged.json')
  await writeFile(other, JSON.stringify({ ...signed, sig: Buffer.alloc(64, 1).toString('base64') }))
  const forged = await run('verify', '--allow-open', '--head', other, '--key', KEY, dir)
  t.equal(forged.code, 1)
  t.match(forged.stdout, 'does not verify with the log key')

  const changed = join(root, 'changed.json')
  await writeFile(changed, JSON.stringify({ ...signed, head: Buffer.alloc(32).toString('base64') }))
  t.match((await run('verify', '--allow-open', '--head', changed, '--key', KEY, dir)).stdout, 'the file was changed')

  for (const bad of ['not json', '{}', JSON.stringify({ ...signed, seq: -1 })]) {
    await writeFile(other, bad)
    const refused = await run('verify', '--allow-open', '--head', other, '--key', KEY, dir)
    t.equal(refused.code, 2, bad)
    t.match(refused.stderr, 'is not a signed head')
  }
})

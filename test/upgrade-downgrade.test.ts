// Anti-rollback's second rule (issue 22, item 8): firmware older than the running version at the
// same anti-rollback level is refused unless the owner confirms the downgrade
// (`POST install_fw {"allow_downgrade": true}`); an image that raises the level is no downgrade.
import t from 'tap'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { versionGoesBack } from '../actors/upgrade/version-order.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { until } from './helpers/until.js'
import { firmwareImage, upload } from './helpers/upload.js'
import { HemClient } from '../client/index.js'

t.test('versionGoesBack: semantic versioning order, and unordered versions count as going back', async (t) => {
  for (const [candidate, running, back] of [
    ['0.0.9', '0.1.0', true],
    ['0.1.0', '0.1.0', false],
    ['0.1.0+other-build', '0.1.0', false],
    ['0.1.1', '0.1.0', false],
    ['0.10.0', '0.9.0', false],
    ['1.0', '1.0.1', true],
    ['1.0.0-rc.1', '1.0.0', true],
    ['1.0.0', '1.0.0-rc.1', false],
    ['1.0.0-rc.2', '1.0.0-rc.10', true],
    ['1.0.0-rc.1', '1.0.0-rc.1.x', true],
    ['1.0.0-alpha', '1.0.0-1', false],
    ['nightly', '0.1.0', true],
    ['0.2.0', 'nightly', true],
    ['nightly', 'nightly', false],
  ] as const)
    t.equal(versionGoesBack(candidate, running), back, `${candidate} over ${running}`)
})

/** Upload and check until the check ends; its final status. */
async function staged(base: string, image: Buffer): Promise<number> {
  t.equal((await upload(base, 'fw', image)).status, 200, 'uploaded')
  let status = 0
  await until(
    'the check ends',
    async () => ![201, 202].includes((status = (await api(`${base}/api/system/upgrade/check_fw`, undefined)).status)),
  )
  return status
}

t.test('E, fresh: an older version at the floor needs the owner to confirm it', async (t) => {
  const root = t.testdir({ data: {}, work: {} })
  const data = join(root, 'data')
  const device = await bootDevice(t, { variant: 'E', dataDir: data })
  const base = device.httpUrl!
  const running = (await api(`${base}/api/system/version`, undefined)).json.fwv as string
  const older = join(root, 'work', 'older.bin')
  t.equal(await firmwareImage(older, '0.0.0-older', '--hardware', 'E'), 0)
  const raising = join(root, 'work', 'raising.bin')
  t.equal(await firmwareImage(raising, '0.0.0-raising', '--hardware', 'E', '--floor', '1'), 0)
  const install = (body?: unknown) => api(`${base}/api/system/upgrade/install_fw`, undefined, body)
  const backAfterRestart = (files: number) =>
    until(
      'back after the restart',
      async () =>
        (await readJournal(data)).files.length > files &&
        (await api(`${base}/api/system/status`, undefined)).status === 200,
    )
  const upgrades = async () =>
    (await readJournal(data)).records.filter((r) => r.type === LogType.UPGRADE && 'kind' in (r.decoded ?? {}))

  t.equal(await staged(base, await readFile(older)), 200, 'a signed build at the floor passes its check')
  const refused = await install()
  t.equal(refused.status, 406, 'GET install_fw: not without the confirmation')
  t.equal(refused.json.error, 'downgrade_not_confirmed')
  t.match(
    refused.json.message,
    new RegExp(`0\\.0\\.0-older goes back from the running ${running.replace(/\./g, '\\.')}`),
  )
  t.equal((await install({})).status, 406, 'nor a POST that does not confirm')
  t.equal((await install({ allow_downgrade: false })).status, 406)
  t.equal((await install({ allow_downgrade: 'yes' })).status, 400, 'the confirmation is a boolean')
  t.match(
    (await upgrades()).map((r) => [r.result, r.decoded?.source]),
    [
      [LogResult.ERROR, 406],
      [LogResult.ERROR, 406],
      [LogResult.ERROR, 406],
    ],
    'each refusal is journaled',
  )

  // A new level is the vendor's word: no downgrade, whatever the version.
  t.equal(await staged(base, await readFile(raising)), 200)
  const restarts = (await readJournal(data)).files.length
  t.equal((await install()).status, 200, 'an image that raises the floor installs without a confirmation')
  await backAfterRestart(restarts)

  t.equal(await staged(base, await readFile(older)), 200)
  const beforeConfirmed = (await readJournal(data)).files.length
  // The client library sends the confirmation as hemctl upgrade fw --allow-downgrade does.
  await new HemClient({ url: base }).install('fw', { allowDowngrade: true })
  t.pass('the owner confirms: it installs')
  // The install restarts the device: the test ends (and its data dir goes) only once it is back.
  await backAfterRestart(beforeConfirmed)
  const records = await upgrades()
  t.match(
    records.at(-1),
    { result: LogResult.OK, decoded: { source: 200, version: '0.0.0-older', downgrade: true } },
    'the install record says it went back',
  )
  t.notOk(records.at(-2)?.decoded?.downgrade, 'the floor-raising install did not')
})

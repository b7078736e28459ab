// Firmware upgrade end to end through hemd's launcher: the project's own build with a
// bumped version really runs after the reboot; a new firmware that fails at boot is rolled
// back; a downgrade below the anti-rollback floor is refused; the journal verifies throughout.
import t from 'tap'
import { cp, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { signBuild } from '../image/firmware-manifest.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { buildImage, packDirectory } from '../image/index.js'
import { distDir, freePort } from './helpers/device.js'
import { call } from './helpers/http.js'
import { auditBin, runHemd, runToEnd } from './helpers/hemd-process.js'
import { readJournal } from './helpers/journal.js'
import { until } from './helpers/until.js'
import { DEV_VENDOR_PEM, firmwareImage, upload } from './helpers/upload.js'

/** Upload, check until it ends, install: the statuses of the check and of the install. */
async function upgrade(
  base: string,
  image: Buffer,
): Promise<{ upload: number; check: number; message?: unknown; install?: number }> {
  const uploaded = await upload(base, 'fw', image)
  if (uploaded.status !== 200) return { upload: uploaded.status, check: 0 }
  let check = await call(`${base}/api/system/upgrade/check_fw`)
  await until(
    'the check ends',
    async () => ![201, 202].includes((check = await call(`${base}/api/system/upgrade/check_fw`)).status),
  )
  if (check.status !== 200) return { upload: 200, check: check.status, message: check.json.message }
  return { upload: 200, check: 200, install: (await call(`${base}/api/system/upgrade/install_fw`)).status }
}

const fwv = async (base: string) => (await call(`${base}/api/system/version`)).json.fwv as string

t.test('upgrade into a new build, refuse a downgrade, roll back a build that fails at boot', async (t) => {
  const root = t.testdir({ data: {}, work: {} })
  const data = join(root, 'data')
  const work = join(root, 'work')
  const up = join(work, 'up.bin')
  t.equal(await firmwareImage(up, '0.2.0-up', '--floor', '2'), 0)
  const old = join(work, 'old.bin')
  t.equal(await firmwareImage(old, '0.1.9-old', '--floor', '1'), 0)
  // Signed and well formed, so it passes every check; it just cannot start.
  const brokenDir = join(work, 'broken')
  await cp(distDir, brokenDir, { recursive: true })
  await writeFile(join(brokenDir, 'bin', 'hemd.js'), "process.stderr.write('broken firmware\\n')\nprocess.exit(3)\n")
  await signBuild(brokenDir, '0.3.0-broken', await DEV_VENDOR_PEM)
  const broken = buildImage(
    { kind: 'fw', hardware: ['P', 'E'], floor: 2, version: '0.3.0-broken' },
    await packDirectory(brokenDir),
    await DEV_VENDOR_PEM,
  )

  const [http, https] = [await freePort(), await freePort()]
  const hemd = await runHemd(t, ['--data', data, '--http', `127.0.0.1:${http}`, '--https', `127.0.0.1:${https}`])
  const base = `http://127.0.0.1:${http}`
  const factory = await fwv(base)

  t.same(await upgrade(base, await readFile(up)), { upload: 200, check: 200, install: 200 }, 'the new build installs')
  await until('the new firmware runs', async () => (await fwv(base)) === '0.2.0-up', 60_000)
  // The trial confirms its health just after the device answers: fw_upgrade shows once it has.
  await until(
    'status.fw_upgrade after the upgrade reboot',
    async () => (await call(`${base}/api/system/status`)).json.fw_upgrade === true,
    30_000,
  )
  t.equal((await call(`${base}/api/system/status`)).json.fw_upgrade, true, 'status.fw_upgrade after the upgrade reboot')
  await until(
    'the launcher keeps it',
    async () => JSON.parse(await readFile(join(data, 'boot', 'slots.json'), 'utf8')).active === 'B',
  )
  t.match(
    JSON.parse(await readFile(join(data, 'boot', 'slots.json'), 'utf8')),
    { active: 'B', floor: 2 },
    'slot B active, the floor raised to 2',
  )

  const refused = await upgrade(base, await readFile(old))
  t.equal(refused.check, 406, 'an image below the floor is rejected')
  t.match(refused.message, /floor/)

  t.same(
    await upgrade(base, broken),
    { upload: 200, check: 200, install: 200 },
    'a build that cannot start still installs',
  )
  await until('the launcher gives the broken build up', () => hemd.stderr().includes('rolling back'), 60_000)
  await until('the old slot runs again', async () => (await fwv(base)) === '0.2.0-up', 60_000)
  t.notOk('fw_upgrade' in (await call(`${base}/api/system/status`)).json, 'no fw_upgrade after a rollback')
  t.match(hemd.stderr(), /broken firmware/, 'the broken build did run, once')

  t.equal(await hemd.interrupt(), 0)
  const records = (await readJournal(data)).records
  const upgrades = records.filter((r) => r.type === LogType.UPGRADE).map((r) => [r.result, r.decoded?.source])
  t.same(
    upgrades,
    [
      [LogResult.OK, 'factory'],
      [LogResult.OK, 200],
      [LogResult.OK, 200],
      [LogResult.ERROR, 'rollback'],
    ],
    'the factory app at the first start, two installs and one rollback journaled',
  )
  const fw = records
    .filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'upgrade' && r.decoded?.instance === 'fw')
    .map((r) => `${r.decoded?.from}>${r.decoded?.to}`)
  t.ok(fw.includes('idle>confirming') && fw.includes('confirming>committed'), 'the trial boot confirmed')
  t.ok(fw.includes('idle>rolled_back'), 'the rollback is a transition of the old firmware')
  const startups = records.filter((r) => r.type === LogType.STARTUP).map((r) => `${r.decoded?.fwv}@${r.decoded?.slot}`)
  t.same(
    startups,
    [`${factory}@A`, '0.2.0-up@B', '0.2.0-up@B'],
    'each boot journals the firmware and the slot it ran from (the broken build never got that far)',
  )
  t.not(factory, '0.2.0-up')
  const audit = await runToEnd(auditBin, ['verify', '--key', hemd.logKey, join(data, 'journal')])
  t.equal(audit.code, 0, audit.stdout + audit.stderr)
})

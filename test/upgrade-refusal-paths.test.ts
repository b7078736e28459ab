// An upgrade's refusals name no path on the device (issue 22, item 8): the bootloader's and the
// file system's reasons carry the data dir's layout, which the ops log keeps and the client never sees.
import t from 'tap'
import { rm, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { bootDevice } from './helpers/device.js'
import { api } from './helpers/keys.js'
import { until } from './helpers/until.js'
import { imageOf, upload } from './helpers/upload.js'

/** An absolute path, or the test's own directory named in any form. */
const noPath = (message: unknown, root: string) =>
  typeof message === 'string' && !message.includes(root) && !/(^|[\s'"(:])\//.test(message)

async function checkEnds(base: string): Promise<{ status: number; json: Record<string, unknown> }> {
  let answer = await api(`${base}/api/system/upgrade/check_fw`, undefined)
  await until(
    'the check ends',
    async () => ![201, 202].includes((answer = await api(`${base}/api/system/upgrade/check_fw`, undefined)).status),
  )
  return answer
}

t.test('E: the install and check 406s say why without a path', async (t) => {
  const root = t.testdir({ data: {}, app: { 'index.html': 'not a build' } })
  const data = join(root, 'data')
  const device = await bootDevice(t, { variant: 'E', dataDir: data })
  const base = device.httpUrl!
  const notBuild = await imageOf(join(root, 'app'), 'fw', '7.0.0', ['E'])

  t.equal((await upload(base, 'fw', notBuild)).status, 200)
  t.equal((await checkEnds(base)).status, 200, 'a signed archive of any files passes the check')
  const install = await api(`${base}/api/system/upgrade/install_fw`, undefined)
  t.equal(install.status, 406)
  t.match(install.json, { error: 'not_verified', message: /no bootable build/ })
  t.ok(noPath(install.json.message, root), `no path in: ${install.json.message}`)

  // The staged image unreadable (a symlink loop in its place): the file system's error names the path.
  t.equal((await upload(base, 'fw', notBuild)).status, 200)
  const staged = join(data, 'upgrade', 'fw.img')
  await rm(staged)
  await symlink(staged, staged)
  const check = await checkEnds(base)
  t.equal(check.status, 406)
  t.match(check.json, { error: 'rejected', message: /could not be read/ })
  t.ok(noPath(check.json.message, root), `no path in: ${check.json.message}`)
})

// hemctl's check-in: the device's signed check printed for its fleet backend, and the backend's
// signed reply handed back, against a device whose owner trusts the (development) backend.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { signCheckinReply } from '../protocol/checkin.js'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { owned } from './helpers/owner.js'

const backend = createPrivateKey(readFileSync(new URL('../deploy/keys/backend-dev.pem', import.meta.url)))

t.test('checkin get, then reply: the device acts on what its backend signed', async (t) => {
  const dir = t.testdir()
  const o = await owned(t, { dataDir: join(dir, 'device'), cfg: { trusted_backend: true } })
  const hemctl = hemctlInProcess(['--url', o.https, '--insecure'], join(dir, 'config'))
  const get = async () => {
    const answer = await hemctl(['checkin', 'get'])
    t.match(answer, { code: 0, stdout: /^[\w-]+\.[\w-]+\n$/ }, 'the check alone on a line')
    return answer.stdout.trim()
  }

  const stranger = generateKeyPairSync('ed25519').privateKey
  t.match(await hemctl(['checkin', 'reply', signCheckinReply(await get(), stranger)]), {
    code: 1,
    stderr: /hemctl checkin reply: .*406/,
  })
  t.match(await hemctl(['checkin', 'reply', signCheckinReply(await get(), backend)]), {
    code: 0,
    stdout: 'status: OK\n',
  })
  const locked = await hemctl([
    'checkin',
    'reply',
    signCheckinReply(await get(), backend, { action: 'lock' }),
    '--json',
  ])
  t.same({ code: locked.code, answer: JSON.parse(locked.stdout) }, { code: 0, answer: { status: 'LOCKED' } })

  for (const checked of ['not.a reply', 'one-part', `${'a'.repeat(7000)}.b`]) {
    const refused = await hemctl(['checkin', 'reply', checked])
    t.match(refused, { code: 2, stderr: /CHECKED is a signed reply/ }, 'refused before anything is sent')
  }
  t.match(await hemctl(['checkin', 'reply']), { code: 2, stderr: /the reply \(CHECKED\) is needed/ })
})

// The owner's commands end to end, nothing in place of anything: the built hem-cloud (test mode), a real device,
// the built `hem-authenticator auto --decide allow,deny`, and hemctl in this process. hemctl auth pair pairs the
// authenticator through the broker; login --remote gets a token the authenticator allowed (and it works), then a
// denial; auth pairings shows the pairing on both sides; auth unpair removes it from both; a following login
// --remote reaches no authenticator, the device sealing the scope for no one.
import t from 'tap'
import { join } from 'node:path'
import { runAuthenticator } from './helpers/authenticator-cli.js'
import { autoAuthenticator, cloudProcess } from './helpers/ext-e2e.js'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { brokerKey, payloadOf, post } from './helpers/ext-phone.js'
import { call } from './helpers/http.js'
import { bearer, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

const KID = /^[0-9a-f]{32}$/

t.test('pair, approve, deny, list, unpair: hemctl, hem-cloud and hem-authenticator together', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { dataDir: join(root, 'device') })
  const cloud = await cloudProcess(t)
  const auto = await autoAuthenticator(t, cloud.url, 'allow,deny')
  const hemctl = hemctlInProcess(['--url', o.https, '--insecure'], root)
  const onCloud = ['--cloud', cloud.url]
  const pairingsBothSides = async () => {
    const run = await hemctl(['auth', 'pairings', ...onCloud, '--json'])
    t.equal(run.code, 0, run.stderr)
    return JSON.parse(run.stdout) as { device: { kid: string; pid: string }[]; broker: { kid: string; pid: string }[] }
  }

  const paired = await hemctl(['auth', 'pair', ...onCloud, '--wait', '60'])
  t.equal(paired.code, 0, `${paired.stderr}\nauthenticator: ${auto.stdout()}${auto.stderr()}`)
  t.match(paired.stdout, /^payload: \{.*\}$/m, 'the QR payload as text')
  t.match(paired.stdout, new RegExp(`^link: ${cloud.url}/notify/register/challenge/[0-9a-f]+$`, 'm'), 'the link')
  const kid = /^paired: KID ([0-9a-f]+), label "e2e phone"$/m.exec(paired.stdout)?.[1] ?? ''
  t.match(kid, KID, 'the KID printed, with the label the authenticator chose')
  const pid = /^paired (\S+) with device /m.exec(auto.stdout())?.[1]
  t.ok(pid, 'the authenticator says it paired')

  const listed = await pairingsBothSides()
  t.match(listed.device, [{ kid, pid }], 'the device lists the pairing key')
  t.match(listed.broker, [{ pid }], 'the broker lists the subscriber')
  const text = await hemctl(['auth', 'pairings', ...onCloud])
  t.equal(text.code, 0, text.stderr)
  t.match(text.stdout, new RegExp(`^${kid}  ${pid!.replace(/[+/]/g, '\\$&')}  "e2e phone"$`, 'm'))
  t.notMatch(text.stdout, /not at the broker|At the broker only/, 'nothing missing on either side')

  const allowed = await hemctl(['login', '--remote', ...onCloud, '--scope', 'system:config', '--wait', '60'])
  t.equal(allowed.code, 0, `${allowed.stderr}\nauthenticator: ${auto.stdout()}`)
  const token = allowed.stdout.trim()
  t.equal((await call(`${o.base}/api/system/config`, { headers: bearer(token) })).status, 200, 'the token works')

  const denied = await hemctl(['login', '--remote', ...onCloud, '--scope', 'system:config', '--wait', '60'])
  t.match(denied, { code: 4, stdout: '', stderr: 'hemctl login: denied\n' }, 'the second event is denied')

  const unpaired = await hemctl(['auth', 'unpair', kid, ...onCloud])
  t.equal(unpaired.code, 0, unpaired.stderr)
  t.equal(unpaired.stdout, `removed from the device: KID ${kid}\nremoved from the broker: pid ${pid}\n`)
  t.same(await pairingsBothSides(), { device: [], broker: [] }, 'gone on both sides')

  const sealed = await post(o.base, 'request', { epk: brokerKey().epk, scope: 'system:config' })
  t.same(payloadOf(sealed.json.authreq as string).scope, {}, 'the device seals the scope for no one')
  const alone = await hemctl(['login', '--remote', ...onCloud, '--wait', '60'])
  t.match(alone, {
    code: 4,
    stderr: /no paired authenticator got the request \(hemctl auth pair\); the request was withdrawn/,
  })
})

t.test('hem-authenticator pair and approve --once, answered without a terminal, with hemctl', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { dataDir: join(root, 'device') })
  const cloud = await cloudProcess(t)
  const hemctl = hemctlInProcess(['--url', o.https, '--insecure'], root)
  const store = ['--store', join(root, 'pairings.json')]
  const env = { HEM_AUTHENTICATOR_PASSPHRASE: 'phone unlock phrase' }

  const pairing = hemctl(['auth', 'pair', '--cloud', cloud.url, '--wait', '60'])
  let rid: string | undefined
  await until('the registration pending', async () => {
    rid = ((await call(`${cloud.url}/notify/register/pending`)).json as { rid: string }[])[0]?.rid
    return rid !== undefined
  })
  const paired = runAuthenticator(['pair', `${cloud.url}/notify/register/challenge/${rid}`, '--yes', ...store], { env })
  t.equal(await paired.done, 0, paired.stderr())
  const hemctlPaired = await pairing
  t.equal(hemctlPaired.code, 0, hemctlPaired.stderr)
  t.match(hemctlPaired.stdout, /^paired: KID [0-9a-f]{32}, label "hem-authenticator \(.+\)"$/m)

  const login = hemctl(['login', '--remote', '--cloud', cloud.url, '--scope', 'system:config', '--wait', '60'])
  let asked = ''
  await until('an approval asked and given', async () => {
    const approve = runAuthenticator(['approve', '--once', ...store], { env, answers: ['y', '1'] })
    t.equal(await approve.done, 0, approve.stderr())
    asked = approve.stdout()
    return asked.includes('Allow?')
  })
  t.match(asked, 'system:config', 'the owner is shown the scope')
  const allowed = await login
  t.equal(allowed.code, 0, allowed.stderr)
  const token = allowed.stdout.trim()
  t.equal((await call(`${o.base}/api/system/config`, { headers: bearer(token) })).status, 200, 'the token works')
})

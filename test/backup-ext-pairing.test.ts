// An external authenticator's pairing after a restore (docs/backup.md#external-authenticators), with nothing in place
// of anything: the built hem-cloud (test mode), the built `hem-authenticator auto`, real devices and hemctl in this
// process. A's pairing comes along to B (the same KID, pid and public key) but answers nothing there: the broker
// routes B's requests to authenticators paired with B's eid, and the authenticator's S_pair is with A's eid. The owner
// unpairs it on B and pairs again; A's pairing still works. Restored onto A itself (after a wipeout), the pairing works
// with nothing to do.
import { join } from 'node:path'
import t from 'tap'
import { extAuthSub } from '../protocol/index.js'
import { downloadBackup, restoreWith, setBackupPassphrase, uploadBackup } from './helpers/backup.js'
import { bootDevice } from './helpers/device.js'
import { autoAuthenticator, cloudProcess } from './helpers/ext-e2e.js'
import { brokerKey, payloadOf, post } from './helpers/ext-phone.js'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { call } from './helpers/http.js'
import { api, Tokens } from './helpers/keys.js'
import { wipeout } from './helpers/model-device.js'
import { bearer, login, MASTER_PASS, owned } from './helpers/owner.js'

type Hemctl = ReturnType<typeof hemctlInProcess>

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'))
/** The device's eid: the `iss` of an authreq it makes (no token needed). */
const eidOf = async (base: string) =>
  payloadOf((await post(base, 'request', { epk: brokerKey().epk, scope: 'system:config' })).json.authreq).iss

t.test("a restore carries A's pairing: inert on another device until re-paired, working on A itself", async (t) => {
  const root = t.testdir()
  const a = await owned(t, { dataDir: join(root, 'a') })
  const cloud = await cloudProcess(t)
  const auto = await autoAuthenticator(t, cloud.url, 'allow')
  const onCloud = ['--cloud', cloud.url]
  const hemctlA = hemctlInProcess(['--url', a.https, '--insecure'], join(root, 'hemctl-a'))
  const pairWith = async (hemctl: Hemctl) => {
    const run = await hemctl(['auth', 'pair', ...onCloud, '--wait', '60'])
    t.equal(run.code, 0, `${run.stderr}\nauthenticator: ${auto.stdout()}${auto.stderr()}`)
    return /^paired: KID ([0-9a-f]{32}),/m.exec(run.stdout)?.[1] ?? ''
  }
  const remoteLogin = (hemctl: Hemctl) =>
    hemctl(['login', '--remote', ...onCloud, '--scope', 'system:config', '--wait', '60'])
  const pairings = async (hemctl: Hemctl) => {
    const run = await hemctl(['auth', 'pairings', ...onCloud, '--json'])
    t.equal(run.code, 0, run.stderr)
    return JSON.parse(run.stdout) as { device: { kid: string; pid: string }[]; broker: { pid: string }[] }
  }
  const aidOf = async (https: string, base: string, kid: string) =>
    (await api(`${https}/api/keymgmt/get/${kid}`, await new Tokens(base).get('keymgmt:get'))).json.pubkey as string

  const kid = await pairWith(hemctlA)
  const onA = await pairings(hemctlA)
  t.match(onA, { device: [{ kid }], broker: [{ pid: onA.device[0]?.pid }] }, 'A is paired, on both sides')
  const pid = onA.device[0]!.pid
  const aid = await aidOf(a.https, a.base, kid)
  const master = await login(a.base, 'system:backup', MASTER_PASS)
  t.equal((await setBackupPassphrase(a.https, master)).status, 200)
  const file = (await downloadBackup(a.https, master)).bytes

  const b = await bootDevice(t, { dataDir: join(root, 'b'), variant: 'E' })
  t.equal((await uploadBackup(b.httpsUrl!, file)).status, 200)
  t.equal((await restoreWith(b.httpsUrl!)).status, 200, 'A restored onto B')
  const hemctlB = hemctlInProcess(['--url', b.httpsUrl!, '--insecure'], join(root, 'hemctl-b'))
  const [eidA, eidB] = [await eidOf(a.base), await eidOf(b.httpUrl!)]
  t.not(eidB, eidA, 'B keeps its own eid')
  t.match(await pairings(hemctlB), { device: [{ kid, pid }], broker: [] }, "B lists A's pairing; the broker, none")
  t.equal((await pairings(hemctlB)).device.length, 1)
  t.equal(await aidOf(b.httpsUrl!, b.httpUrl!, kid), aid, "the authenticator's public key, as on A")
  const shown = await hemctlB(['auth', 'pairings', ...onCloud])
  t.match(shown.stdout, `${kid}  ${pid}  "e2e phone"  (not at the broker: it gets no request)`, 'hemctl says so')
  const unanswered = await remoteLogin(hemctlB)
  t.match(
    unanswered,
    { code: 4, stderr: /no paired authenticator got the request/ },
    "B's request reaches no authenticator: the pairing is A's",
  )

  // What docs/backup.md tells the owner: unpair the carried pairing on B (the device only: the broker's is A's), pair.
  const unpaired = await hemctlB(['auth', 'unpair', kid])
  t.equal(unpaired.stdout, `removed from the device: KID ${kid}\n`, unpaired.stderr)
  const kidB = await pairWith(hemctlB)
  t.not(kidB, kid, 'a new pairing, its own key')
  const onB = await remoteLogin(hemctlB)
  t.equal(onB.code, 0, `${onB.stderr}\nauthenticator: ${auto.stdout()}`)
  t.match(claimsOf(onB.stdout.trim()), { sub: extAuthSub(kidB), scope: 'system:config' }, 'B approved, re-paired')
  const configB = await call(`${b.httpUrl}/api/system/config`, { headers: bearer(onB.stdout.trim()) })
  t.equal(configB.status, 200, 'the token opens B')
  const stillA = await remoteLogin(hemctlA)
  t.equal(stillA.code, 0, stillA.stderr)
  t.match(claimsOf(stillA.stdout.trim()), { sub: extAuthSub(kid) }, "A's pairing works on A all along")

  // The same file back onto A after a wipeout: its own eid, so the broker and the authenticator know the pairing.
  await wipeout(a.base, a.device.dataDir, a.token)
  t.equal((await uploadBackup(a.https, file)).status, 200)
  t.equal((await restoreWith(a.https)).status, 200, 'A restored from its own backup')
  t.equal(await eidOf(a.base), eidA, 'a wipeout keeps the eid')
  const again = await remoteLogin(hemctlA)
  t.equal(again.code, 0, `${again.stderr}\nauthenticator: ${auto.stdout()}`)
  t.match(claimsOf(again.stdout.trim()), { sub: extAuthSub(kid) }, 'the restored pairing works, nothing re-paired')
  t.equal((await call(`${a.base}/api/system/config`, { headers: bearer(again.stdout.trim()) })).status, 200)
})

// The family's certification flows (ext-auth contract §5) end to end against real processes: hem-cloud in test mode,
// hemd --diag (a P device with the development keys, so it trusts the development backend key the cloud signs with)
// and hem-authenticator auto. Every request is shaped as the PHP scripts send it: raw JSON, Content-Type
// application/json. One device runs T-2, T-3, T-5 and T-6 in turn, as the scripts' preconditions say.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { request as httpsRequest } from 'node:https'
import t, { type Test } from 'tap'
import { freePort } from './helpers/device.js'
import {
  CERT_AUTHKEY,
  CERT_ZONE,
  DEV_KEYS,
  type RunningProcess,
  startAutoAuthenticator,
  startCertCloud,
} from './helpers/ext-cert-processes.js'
import { runHemd } from './helpers/hemd-process.js'
import { call, type Answer } from './helpers/http.js'
import { boots, rebooted } from './helpers/model-device.js'
import { loginAnswer, MASTER_PASS, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

const DOMAIN_CA = readFileSync(`${DEV_KEYS}/domain-ca-dev.crt.pem`, 'utf8')
const HOSTNAME = `my.${CERT_ZONE}`
/** register/check and event/check: T-5.1 and T-6.1 poll at most 13 times, 5 s apart. */
const SCRIPT_WINDOW_MS = 13 * 5000

/** A PHP script's request: a JSON body with its content type, a bearer when given. */
function php(url: string, body?: unknown, token?: string, method = body === undefined ? 'GET' : 'POST') {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  return call(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
}

/** GET over HTTPS trusting only the domain CA, for `servername` (SNI and the name checked), TLS 1.3 only. */
function trustedGet(url: string, servername: string): Promise<{ status: number; protocol: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca: DOMAIN_CA, servername, minVersion: 'TLSv1.3', agent: false }, (res) => {
      const protocol = (res.socket as import('node:tls').TLSSocket).getProtocol() ?? ''
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, protocol }))
    })
    req.on('error', reject)
    req.end()
  })
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
}

const now = () => Math.floor(Date.now() / 1000)

t.test(
  'the certification scripts T-1.3, T-2, T-3, T-5 and T-6 against hem-cloud, hemd --diag and hem-authenticator auto',
  async (t) => {
    const dir = t.testdir()
    const harness = t
    const cloud = await startCertCloud(t, `${dir}/cloud`)
    const [httpPort, httpsPort] = [await freePort(), await freePort()]
    const deviceData = `${dir}/device`
    // Fixed ports: the device reboots (T-2.1, T-5.3) and must come back where the scripts left it.
    const hemd = await runHemd(t, [
      ...['--data', deviceData, '--diag', '--variant', 'P'],
      ...['--http', `127.0.0.1:${httpPort}`, '--https', `127.0.0.1:${httpsPort}`],
    ])
    const dev = hemd.httpUrl
    const devs = hemd.httpsUrl

    /** helper_checkin: device GET checkin → cloud POST /checkin → device POST checkin. */
    async function helperCheckin(t: Test, when: string): Promise<void> {
      const check = await php(`${dev}/api/system/checkin`)
      t.match(
        check,
        { status: 200, json: { check: String } },
        `helper_checkin (${when}): dev GET checkin 200, check set`,
      )
      const checked = await php(`${cloud.url}/checkin`, check.json)
      t.match(checked, { status: 200, json: { checked: String } }, `helper_checkin (${when}): cloud POST /checkin 200`)
      const done = await php(`${dev}/api/system/checkin`, { checked: checked.json.checked })
      t.match(done, { status: 200, json: { status: /./ } }, `helper_checkin (${when}): dev POST checkin 200, status`)
    }

    const status = async () => (await php(`${dev}/api/system/status`)).json
    let initToken = ''

    await t.test('T-1.3 and T-2: first start with a domain certificate', async (t) => {
      const fresh = await php(`${dev}/api/system/status`)
      t.match(fresh, { status: 200, json: { fls_state: 0 } }, 'T-2.1 dev status 200, fls_state 0')
      t.ok('inited' in fresh.json, 'T-2.1 dev status: inited set (isset: present, even false)')
      await helperCheckin(t, 'fresh')
      t.ok((await status()).ts, 'T-1.3 dev status: ts set after the check-in')
      const checkin = `${dev}/api/system/checkin`
      const truncated = await call(checkin, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"checked":"somedata"',
      })
      t.equal(truncated.status, 400, 'T-1.5 dev POST checkin with a truncated JSON body 400')
      t.equal((await php(checkin, { checked: 'x'.repeat(7301 - 14) })).status, 413, 'T-1.5 a 7301-byte body 413')
      t.equal((await php(`${cloud.url}/domain/check/cctest${now()}`)).status, 404, 'T-2.1 EPA cloud domain/check 404')

      const init = await personalise(dev, 'P', { gen_csr: true, hostname: HOSTNAME, trusted_backend: true })
      t.match(init, { status: 200, json: { csr: String, genuine: String, token: String } }, 'T-2.1 dev auth/init 200')
      initToken = init.json.token
      await until('formatting done', async () => (await status()).format === 'done')

      const ppa = await php(`${cloud.url}/domain/register/my/${CERT_AUTHKEY}`, {
        genuine: init.json.genuine,
        ip: '192.168.7.1',
      })
      t.match(
        ppa,
        { status: 200, json: { crt: String, key: String, emp: String } },
        'T-2.1 PPA cloud register 200, tls',
      )
      const epa = await php(`${cloud.url}/domain/register/cctest${now()}/${CERT_AUTHKEY}`, {
        csr: init.json.csr,
        genuine: init.json.genuine,
        cname: HOSTNAME,
      })
      t.match(epa, { status: 200, json: { status: 'done', crt: String } }, 'T-2.1 EPA cloud register with the csr 200')

      const before = await boots(deviceData)
      const config = await php(`${dev}/api/system/config`, { tls: ppa.json }, initToken)
      t.equal(config.status, 200, `T-2.1 dev POST config {tls} 200 ${config.text}`)
      if (config.json.reboot_required) {
        t.equal((await php(`${dev}/api/system/reboot`, undefined, initToken)).status, 200, 'T-2.1 dev reboot 200')
        await rebooted(dev, deviceData, before)
      }
      t.equal((await php(`${dev}/api/system/status`)).status, 200, 'T-2.1 dev status after the reboot 200')
      await helperCheckin(t, 'after the reboot')
      t.equal((await php(`${dev}/api/auth/init`)).status, 406, 'T-2.2 dev GET auth/init 406')

      t.ok((await status()).https, 'T-2.3 dev status: https set')
      t.same(
        await trustedGet(`${devs}/api/system/status`, HOSTNAME),
        { status: 200, protocol: 'TLSv1.3' },
        'T-2.3 TLS 1.3 to the host name, the certificate trusted through the domain CA; https status 200',
      )
    })

    const dummyEpk = Buffer.alloc(32, 9).toString('base64')
    const userLogin = async (scope: string) => (await loginAnswer(dev, scope)).json.token as string

    await t.test('T-3: local login and ext/init role rules', async (t) => {
      const u = await loginAnswer(dev, 'system:config')
      const m = await loginAnswer(dev, 'system:config', MASTER_PASS)
      t.match(
        [u.status, claimsOf(u.json.token).sub, m.status, claimsOf(m.json.token).sub],
        [200, 'U', 200, 'M'],
        'T-3.1 U and M logins',
      )
      t.equal(
        (await php(`${dev}/api/auth/ext/init`, { epk: dummyEpk }, u.json.token)).status,
        200,
        'T-3.2 ext/init with the U token 200',
      )
      t.equal(
        (await php(`${dev}/api/auth/ext/init`, { epk: dummyEpk }, m.json.token)).status,
        403,
        'T-3.2 ext/init with the M token 403',
      )
      t.equal((await php(`${dev}/api/logger/key`, undefined, u.json.token)).status, 403, 'T-3.2 logger/key U 403')
      t.equal((await php(`${dev}/api/logger/key`, undefined, m.json.token)).status, 403, 'T-3.2 logger/key M 403')

      const fresh = await userLogin('system:config')
      t.equal((await php(`${dev}/api/auth/ext/init`, { epk: dummyEpk }, fresh)).status, 200, 'T-3.4 fresh U token 200')
      const [head, , mac] = fresh.split('.')
      const claims = claimsOf(fresh)
      const forged = Buffer.from(JSON.stringify({ ...claims, exp: (claims.exp as number) + 3600 })).toString('base64')
      t.equal(
        (await php(`${dev}/api/auth/ext/init`, { epk: dummyEpk }, `${head}.${forged}.${mac}`)).status,
        401,
        'T-3.4 the same token with exp+3600 re-encoded 401',
      )
    })

    let configToken = ''
    let auto: RunningProcess | undefined

    /**
     * Polls a broker check route while it answers 202, within the scripts' window (13 polls, 5 s apart); a
     * timeout says what the authenticator printed.
     */
    async function answered(url: string, what: string): Promise<Answer> {
      const start = performance.now()
      let answer: Answer | undefined
      await until(what, async () => (answer = await php(url)).status !== 202, SCRIPT_WINDOW_MS).catch((err) => {
        throw new Error(`${what}: still pending; the authenticator printed:\n${auto?.output()}`, { cause: err })
      })
      t.comment(`${what}: answered after ${Math.round(performance.now() - start)} ms`)
      return answer!
    }
    let eid = ''

    await t.test('T-5: pairing, the wrong scope', async (t) => {
      t.equal((await php(`${dev}/api/system/version`)).status, 200, 'T-5.1 dev version 200')
      await helperCheckin(t, 'T-5')
      configToken = await userLogin('system:config')
      const config = await php(`${dev}/api/system/config`, undefined, configToken)
      t.match(
        config,
        { status: 200, json: { eid: String, user: String, email: String, hostname: HOSTNAME } },
        'T-5.1 dev GET config 200 with eid, user, email, hostname',
      )
      eid = config.json.eid
      const session = await php(`${cloud.url}/notify/session`, { eid })
      t.match(session, { status: 200, json: { epk: String } }, 'T-5.1 cloud POST notify/session {eid} 200, epk')
      const init = await php(`${dev}/api/auth/ext/init`, { epk: session.json.epk }, configToken)
      t.match(init, { status: 200, json: { eid, request: String } }, 'T-5.1 dev ext/init {epk} 200, eid, request')
      const register = await php(`${cloud.url}/notify/register/init`, { ...init.json, epk: session.json.epk })
      t.match(
        register,
        { status: 200, json: { rid: String, link: String } },
        'T-5.1 cloud register/init 200, rid, link',
      )
      const checkUrl = `${cloud.url}/notify/register/check/${register.json.rid}`
      t.equal((await php(checkUrl)).status, 202, 'T-5.1 cloud register/check 202 while nobody has paired')

      // The harness's phone: it pairs every pending registration of the test-mode cloud, and stays for T-6.
      auto = await startAutoAuthenticator(harness, cloud.url, 'allow,deny')
      const paired = await answered(checkUrl, 'T-5.1 the pairing')
      t.match(
        paired,
        { status: 200, json: { pid: String, reply: String } },
        'T-5.1 register/check 202 then 200 {pid, reply}',
      )
      const validate = await php(`${dev}/api/auth/ext/validate`, paired.json, configToken)
      t.match(validate, { status: 200, json: {} }, 'T-5.1 dev ext/validate {pid, reply} 200 (JSON)')
      const finalise = await php(`${cloud.url}/notify/register/finalise/${register.json.rid}`, validate.json)
      t.equal(finalise.status, 200, `T-5.1 cloud register/finalise 200 ${finalise.text}`)

      const wrong = await loginAnswer(dev, 'system:wrong')
      t.equal(wrong.status, 200, 'T-5.2 U login with system:wrong succeeds')
      t.equal((await php(`${dev}/api/system/config`, undefined, configToken)).status, 200, 'T-5.2 config GET 200')
      const again = await php(`${cloud.url}/notify/session`, { eid })
      t.equal(again.status, 200, 'T-5.2 cloud session {eid} 200')
      t.equal(
        (await php(`${dev}/api/auth/ext/init`, { epk: again.json.epk }, wrong.json.token)).status,
        403,
        'T-5.2 ext/init with the system:wrong token 403',
      )
    })

    /** One T-6 round: session, ext/request, event/new, then event/check polled until it is no longer pending. */
    async function approvalRound(t: Test, name: string, ttl: number): Promise<Answer> {
      t.equal((await php(`${dev}/api/system/version`)).status, 200, `${name} dev version 200`)
      await helperCheckin(t, name)
      const session = await php(`${cloud.url}/notify/session`)
      t.match(session, { status: 200, json: { epk: String } }, `${name} cloud GET notify/session 200, epk`)
      const ask = await php(`${dev}/api/auth/ext/request`, {
        epk: session.json.epk,
        exp: now() + ttl,
        scope: 'system:config',
      })
      t.match(ask, { status: 200, json: { authreq: String } }, `${name} dev ext/request 200`)
      const event = await php(`${cloud.url}/notify/event/new`, ask.json)
      t.match(event, { status: 200, json: { eventid: String } }, `${name} cloud event/new 200, eventid`)
      return answered(`${cloud.url}/notify/event/check/${event.json.eventid}`, `${name} the event`)
    }

    await t.test('T-5.3 (DIAG): a broken device answers ext/init 409, and reboots', async (t) => {
      const before = await boots(deviceData)
      const wrong = await userLogin('system:wrong')
      t.equal((await php(`${dev}/api/diag/break_temp`)).status, 200, 'T-5.3 dev diag/break_temp 200')
      await until('the device fails', async () => (await status()).fls_state !== 0)
      t.equal(
        (await php(`${dev}/api/auth/ext/init`, { epk: dummyEpk }, wrong)).status,
        409,
        'T-5.3 ext/init with the wrong-scope token 409',
      )
      t.equal((await php(`${dev}/api/system/reboot`, undefined, configToken)).status, 200, 'T-5.3 dev reboot 200')
      await rebooted(dev, deviceData, before)
      t.equal((await status()).fls_state, 0, 'T-6 precondition: fls_state 0 once rebooted')
    })

    await t.test('T-6: an approval, then a denial', async (t) => {
      const allowed = await approvalRound(t, 'T-6.1', 120)
      t.match(allowed, { status: 200, json: { authreply: String } }, 'T-6.1 event/check 200 with authreply')
      t.notOk(allowed.json.deny, 'T-6.1 no deny')
      const token = await php(`${dev}/api/auth/ext/token`, { authreply: allowed.json.authreply })
      t.match(token, { status: 200, json: { token: String } }, 'T-6.1 dev ext/token 200, token')
      t.equal(
        (await php(`${dev}/api/system/config`, undefined, token.json.token)).status,
        200,
        'T-6.1 GET config with the approved token 200',
      )

      const denied = await approvalRound(t, 'T-6.2', 60)
      t.match(denied, { status: 200, json: { deny: true } }, 'T-6.2 event/check 200 with deny set')
      t.notOk(denied.json.authreply, 'T-6.2 no authreply')
    })
  },
)

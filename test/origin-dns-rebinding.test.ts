// The Origin check compares with the configuration only. A DNS-rebinding page (its own name
// pointed at the device) sends that name in Origin and Host alike: matching the request's Host
// admitted it (issue 22, item 6).
import t from 'tap'
import { deviceOrigin } from '../gateway/cors.js'
import { call } from './helpers/http.js'
import { owned } from './helpers/owner.js'

t.test('deviceOrigin: the configured hostname and the request scheme, nothing else', async (t) => {
  t.ok(deviceOrigin('http://hem.example:8080', 'hem.example', false))
  t.ok(deviceOrigin('https://HEM.example', 'hem.example', true), 'case-insensitive')
  t.notOk(deviceOrigin('https://hem.example', 'hem.example', false), 'another scheme')
  t.notOk(deviceOrigin('http://evil.example', 'hem.example', false))
  t.notOk(deviceOrigin('http://hem.example.evil.test', 'hem.example', false))
  t.notOk(deviceOrigin('http://hem.example/path', 'hem.example', false), 'an origin has no path')
  t.notOk(deviceOrigin('http://user@hem.example', 'hem.example', false), 'nor user info')
  t.notOk(deviceOrigin('null', 'hem.example', false))
  t.notOk(deviceOrigin('http://hem.local', '', false), 'no hostname configured: no own origin')
})

t.test('a rebinding page is refused, the device at its configured name is served', async (t) => {
  // Configured: hostname hem.example, origin https://app.example (see helpers/owner.ts).
  const o = await owned(t)
  const { port } = new URL(o.base)
  const status = (headers: Record<string, string>) =>
    call(`${o.base}/api/system/status`, { headers }).then((a) => ({
      status: a.status,
      allowed: a.headers['access-control-allow-origin'],
    }))

  t.same(await status({ Origin: 'http://evil.example', Host: 'evil.example' }), { status: 412, allowed: undefined })
  t.same(
    await status({ Origin: `http://evil.example:${port}`, Host: `evil.example:${port}` }),
    { status: 412, allowed: undefined },
    'with the port too',
  )
  t.same(
    await status({ Origin: `http://127.0.0.1:${port}`, Host: `127.0.0.1:${port}` }),
    { status: 412, allowed: undefined },
    'the address the device was reached at is no configured name',
  )
  const own = `http://hem.example:${port}`
  t.same(await status({ Origin: own, Host: `127.0.0.1:${port}` }), { status: 200, allowed: own }, 'its own name')
  t.same(
    await status({ Origin: 'https://app.example', Host: 'evil.example' }),
    { status: 200, allowed: 'https://app.example' },
    'the configured origin, whatever the Host',
  )
  const preflight = await call(`${o.base}/api/keymgmt/create`, {
    method: 'OPTIONS',
    headers: { Origin: 'http://evil.example', Host: 'evil.example' },
  })
  t.equal(preflight.status, 412, 'a preflight too')
})

// The Origin check compares with the configuration only. A DNS-rebinding page (its own name
// pointed at the device) sends that name in Origin and Host alike: matching the request's Host
// admitted it (issue 22, item 6).
import t from 'tap'
import { deviceOrigin } from '../gateway/cors.js'
import { listenerOrigins } from '../gateway/listener-origins.js'
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

t.test('listenerOrigins: the addresses a listener is reached at, with its port', async (t) => {
  t.same(listenerOrigins('127.0.0.1', 8080, false), ['http://127.0.0.1:8080'])
  t.same(listenerOrigins('::1', 443, true), ['https://[::1]:443', 'https://[::1]'], 'the default port may be left out')
  t.same(listenerOrigins('hem.example', 8080, false), [], 'a name is for the configured hostname to allow')
  t.ok(listenerOrigins('0.0.0.0', 8443, true).includes('https://127.0.0.1:8443'), 'a wildcard: every interface')
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
  const byAddress = `http://127.0.0.1:${port}`
  t.same(
    await status({ Origin: byAddress, Host: 'evil.example' }),
    { status: 200, allowed: byAddress },
    'the address and port it listens on: its own app reached by address, which no rebinding page can be',
  )
  t.same(
    await status({ Origin: `http://127.0.0.1:${Number(port) + 1}`, Host: `127.0.0.1:${port}` }),
    { status: 412, allowed: undefined },
    'another port of that address is another origin',
  )
  t.same(
    await status({ Origin: `http://127.0.0.2:${port}`, Host: `127.0.0.2:${port}` }),
    { status: 412, allowed: undefined },
    'an address it does not listen on',
  )
  const own = `http://hem.example:${port}`
  t.same(await status({ Origin: own, Host: `127.0.0.1:${port}` }), { status: 200, allowed: own }, 'its own name')
  t.same(
    await status({ Origin: 'https://app.example', Host: 'evil.example' }),
    { status: 200, allowed: 'https://app.example' },
    'the configured origin, whatever the Host',
  )
  const exposed = await call(`${o.base}/api/system/status`, { headers: { Origin: 'https://app.example' } })
  t.match(exposed.headers['access-control-expose-headers'], /\bRetry-After\b/, "a 429's Retry-After reaches the page")
  const preflight = await call(`${o.base}/api/keymgmt/create`, {
    method: 'OPTIONS',
    headers: { Origin: 'http://evil.example', Host: 'evil.example' },
  })
  t.equal(preflight.status, 412, 'a preflight too')
})

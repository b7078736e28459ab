// hemd --cloud, the app's cloud: only a URL a CSP can name safely is taken (https, or http on loopback; no
// credentials, query or fragment); the gateway names its origin in the app's connect-src and serves it to the page.
import t from 'tap'
import { UsageError } from '../cli/hemd/endpoint.js'
import { parseHemdArgs, type HemdArgs } from '../cli/hemd/hemd-cli.js'
import { appConfigReply, staticHeaders } from '../gateway/static-site.js'

const cloudOf = (url: string) => (parseHemdArgs(['--cloud', url]) as HemdArgs).appCloud

t.test('hemd --cloud takes https, or http on loopback', async (t) => {
  t.equal(cloudOf('https://cloud.example'), 'https://cloud.example')
  t.equal(cloudOf('https://cloud.example:8443/base/'), 'https://cloud.example:8443/base/')
  t.equal(cloudOf('http://127.0.0.1:8480'), 'http://127.0.0.1:8480')
  t.equal(cloudOf('http://localhost:8480'), 'http://localhost:8480')
  t.equal(cloudOf('http://[::1]:8480'), 'http://[::1]:8480')
  t.equal((parseHemdArgs([]) as HemdArgs).appCloud, undefined, 'none by default')
  for (const [url, why] of [
    ['http://cloud.example', /--cloud: the app's cloud must be an https URL \(or http on loopback\), not http:/],
    ['ftp://cloud.example', /must be an https URL/],
    ['cloud.example', /--cloud: not a URL/],
    ["https://cloud.example/?a=';script-src *", /no credentials, query or fragment/],
    ['https://user:pw@cloud.example', /no credentials, query or fragment/],
    ['https://cloud.example/#x', /no credentials, query or fragment/],
  ] as const)
    t.throws(() => parseHemdArgs(['--cloud', url]), { constructor: UsageError, message: why }, url)
})

t.test("the app's CSP and /app-config.json name the cloud", async (t) => {
  const csp = (cloud?: string) => new Map(staticHeaders(cloud)).get('Content-Security-Policy')
  t.match(csp(), /; connect-src 'self'; /, 'no cloud: the device alone')
  t.match(csp('https://cloud.example:8443/base/'), /; connect-src 'self' https:\/\/cloud\.example:8443; /, 'its origin')
  t.throws(() => staticHeaders('http://cloud.example'), RangeError, 'the gateway refuses what hemd would')
  t.same(appConfigReply(), { status: 200, body: { cloud: null, https_port: null } })
  t.same(appConfigReply(undefined, 8443), { status: 200, body: { cloud: null, https_port: 8443 } })
  t.same(appConfigReply('https://cloud.example'), {
    status: 200,
    body: { cloud: 'https://cloud.example/', https_port: null },
  })
})

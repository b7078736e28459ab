// The quick tier leaves out every file that starts a device, a hemd process or a browser, however
// deep in the helpers it does so, and keeps the unit tests.
import t from 'tap'
import { quickTier } from './tools/quick-tier.js'

const tier = quickTier()

t.test('unit tests are in it', async (t) => {
  for (const file of ['test/crypto-kat.test.ts', 'test/login-queue.test.ts', 'test/gateway-http.test.ts'])
    t.ok(tier.includes(file), file)
})

t.test('a device, a hemd process or a browser keeps a file out, through any helper', async (t) => {
  for (const file of [
    'test/device.test.ts', // bootDevice
    'test/config.test.ts', // owned(), through helpers/owner.ts
    'test/hemd-cli.test.ts', // runHemd
    'test/app-keys.test.ts', // openApp, through helpers/app.ts and helpers/browser.ts
    'test/bench-smoke.test.ts', // runToEnd
  ])
    t.notOk(tier.includes(file), file)
})

t.test('it is itself in the quick tier', async (t) => {
  t.ok(tier.includes('test/quick-tier.test.ts'))
})

// hemd --bus DIR starts from the credentials file hemd bus-config wrote: one that is not complete,
// or links to a backend it does not describe whole, is refused rather than half used.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { BUS_CREDENTIALS_FILE, newBusCredentials, readBusAccess, writeBusAccess } from '../bus/bus-config.js'

const devid = '00112233aabbccdd'
const url = 'nats://127.0.0.1:4222'
const credentials = newBusCredentials()
const users = Object.fromEntries(credentials)

t.test('a backend is read back with or without its generation', async (t) => {
  const dir = t.testdir()
  for (const backend of [
    { url: 'nats-leaf://fleet.example:7422', domain: 'hem' },
    { url: 'nats-leaf://fleet.example:7422', domain: 'hem', generation: 2 },
  ]) {
    await writeBusAccess(dir, { devid, url, credentials, backend })
    const access = await readBusAccess(dir, devid)
    t.same(access.backend, backend)
    t.same([...access.credentials], [...credentials])
  }
})

t.test('a file that is not a complete credentials file is refused', async (t) => {
  const dir = t.testdir()
  const complete = { devid, url, users }
  const cases: [string, unknown][] = [
    ['not an object', null],
    ['a number', 42],
    ['a devid of another form', { ...complete, devid: 'device-1' }],
    ['no devid', { url, users }],
    ['a URL of another scheme', { ...complete, url: 'http://127.0.0.1:4222' }],
    ['no users', { devid, url }],
    ['users not an object', { ...complete, users: 'gateway' }],
    ['a backend that is not an object', { ...complete, backend: 'nats-leaf://fleet.example:7422' }],
    ['a backend without its domain', { ...complete, backend: { url: 'nats-leaf://fleet.example:7422' } }],
    ['a backend without its URL', { ...complete, backend: { domain: 'hem' } }],
    ['generation 1, which is never a later one', { ...complete, backend: { url, domain: 'hem', generation: 1 } }],
    ['a fractional generation', { ...complete, backend: { url, domain: 'hem', generation: 2.5 } }],
    ['a generation in a string', { ...complete, backend: { url, domain: 'hem', generation: '2' } }],
  ]
  for (const [what, json] of cases) {
    await writeFile(join(dir, BUS_CREDENTIALS_FILE), JSON.stringify(json))
    await t.rejects(
      readBusAccess(dir),
      {
        name: 'BusConfigError',
        message: /is not a complete bus credentials file: write it again with hemd bus-config/,
      },
      what,
    )
  }
})

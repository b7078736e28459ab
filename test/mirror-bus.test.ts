// `hemd bus-config --backend` plus `hemd --bus`: the outside nats-server links to the backend, and the
// device mirrors its journal there, as with its own nats-server; the banner shows where and how it goes.

import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { BUS_CONFIG_FILE } from '../bus/bus-config.js'
import { FILE_HEADER, headerPosition, journalStream, SEQ_HEADER } from '../bus/stream-names.js'
import { configureBus } from '../cli/hemd/bus-config-cli.js'
import { mirrorBanner } from '../cli/hemd/mirror-banner.js'
import { openHal } from '../hal/index.js'
import { builtFirmware, freePort } from './helpers/device.js'
import { backendUnderTest, DOMAIN } from './helpers/jetstream-backend.js'
import { readJournal } from './helpers/journal.js'
import { startNats } from './helpers/nats.js'
import { owned } from './helpers/owner.js'
import { streamHeads } from './helpers/stream-heads.js'
import { until } from './helpers/until.js'

t.test('hemd --bus mirrors to the backend hemd bus-config linked the bus to', async (t) => {
  const dir = t.testdir()
  const { backend, leafPort, api } = await backendUnderTest(t, dir)

  const dataDir = join(dir, 'device')
  const busDir = join(dir, 'bus')
  const busPort = await freePort()
  // A backend without users takes any: the password only shows that the banner keeps it to itself.
  const url = `nats://dev:s3cret-leaf@127.0.0.1:${leafPort}`
  // The device exists before its bus is configured (on a board, bus-config makes it from the installed build).
  await (await openHal({ variant: 'E', dataDir, firmware: await builtFirmware() })).close()
  await configureBus({
    out: busDir,
    dataDir,
    variant: 'E',
    listen: { host: '127.0.0.1', port: busPort },
    backend: { url, domain: DOMAIN },
    keep: false,
  })
  const bus = await startNats(busDir, busPort, await readFile(join(busDir, BUS_CONFIG_FILE), 'utf8'))
  t.teardown(() => bus.stop())

  const a = await owned(t, { dataDir, cfg: { trusted_backend: true }, boot: { busDir } })
  t.equal(a.device.natsPid, undefined, 'the device runs on the outside nats-server')
  t.same(a.device.backend, { url, domain: DOMAIN }, 'and knows its backend from the bus directory')
  const stream = journalStream(a.device.devid)
  await until(
    'the journal is mirrored',
    async () => {
      const last = (await readJournal(dataDir)).records.at(-1)!
      const info = await api.info(stream)
      const end = info && (await api.message(stream, { seq: info.lastSeq }))
      const at = end && headerPosition(end.headers?.get(FILE_HEADER), end.headers?.get(SEQ_HEADER))
      return at?.file === last.file && at.seq === last.seq
    },
    { ms: 60_000 },
  )
  const heads = await streamHeads(api, stream, a.device.logPublicKey)
  t.same(heads.bad, [], 'its signed heads verify')
  t.ok(heads.lastSigned, 'and cover every record')

  const banner = await mirrorBanner(a.device)
  t.match(banner.join('\n'), `backend nats://127.0.0.1:${leafPort} (leaf node; JetStream domain ${DOMAIN})`)
  t.match(banner.join('\n'), `mirror mirroring to ${stream}`, `the banner shows the mirror's state\n${banner}`)
  t.notMatch(banner.join('\n'), 's3cret', "but not the leaf user's password")
})

// A device whose stop fails (its close seal cannot be written) still releases what the process holds:
// its own file, so that no other test's timers are counted.
import t from 'tap'
import { rm } from 'node:fs/promises'
import { JournalWriteError } from '../eventstore/index.js'
import { bootDevice } from './helpers/device.js'
import { until } from './helpers/until.js'

t.test('a stop whose close seal cannot be written still closes every connection', async (t) => {
  // A bus connection left open keeps its socket, or, once its server is gone, its ping and reconnect timers.
  const held = () =>
    process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap' || kind === 'Timeout').length
  const before = held()
  // The stop's failure is this test's to see: the teardown's second look at it is not a new one.
  const quietEnd = {
    teardown: (fn: () => unknown) =>
      t.teardown(() =>
        Promise.resolve()
          .then(fn)
          .catch(() => undefined),
      ),
  }
  const dataDir = t.testdir()
  const device = await bootDevice(quietEnd, { dataDir })
  // The close seal moves the enclave's anchor: with the enclave gone, it cannot be written.
  await rm(`${dataDir}/enclave`, { recursive: true })
  await t.rejects(device.stop(), JournalWriteError)
  // A socket that is closing, or a timer of the stop's last step, may outlive stop()'s promise by a turn or two; a
  // connection left open never goes.
  await until('no bus connection is left to keep the process alive', () => held() <= before)
  t.ok(held() <= before, 'no bus connection is left to keep the process alive')
})

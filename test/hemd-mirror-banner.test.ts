// The lines `hemd` prints on the fleet backend at start: each state of the mirror in words, and the
// backend's URL without its leaf user's credentials. The mirror against a real backend is mirror-bus.test.ts's.
import t from 'tap'
import { mirrorBanner } from '../cli/hemd/mirror-banner.js'
import type { MirrorStatus } from '../protocol/index.js'
import type { Device } from '../runtime/index.js'

const STREAM = 'hem-journal-dev1-g0'

/** A device as far as the banner reads it: its backend setting and its mirror's last state. */
function device(mirror: MirrorStatus | undefined, url = 'nats://leaf:s3cret@10.0.0.2:7422'): Device {
  return { backend: { url, domain: 'fleet' }, mirror } as unknown as Device
}

t.test('without a backend, no lines', async (t) => {
  t.same(await mirrorBanner({ backend: undefined, mirror: undefined } as unknown as Device), [])
})

t.test("each state of the mirror, in the banner's words", async (t) => {
  const cases: [MirrorStatus['state'], RegExp][] = [
    ['mirroring', new RegExp(`^  mirror mirroring to ${STREAM};`)],
    ['off', new RegExp(`^  mirror off: the owner has not set trusted_backend \\(${STREAM}\\);`)],
    ['unreachable', new RegExp(`^  mirror ${STREAM}: the backend cannot be reached now; retrying;`)],
    ['mismatch', new RegExp(`^  mirror MISMATCH: ${STREAM} does not continue the journal; .*--stream-generation\\)`)],
    ['rollback', new RegExp(`^  mirror ROLLBACK: the journal went back behind ${STREAM} \\(fls_state 0x08\\);`)],
  ]
  for (const [state, line] of cases) {
    const [backend, mirror] = await mirrorBanner(device({ state, stream: STREAM }))
    t.equal(backend, '  backend nats://10.0.0.2:7422 (leaf node; JetStream domain fleet)', `${state}: the backend`)
    t.match(mirror, line, state)
  }
})

t.test("the leaf user's password never shows, nor an unparsable URL's text", async (t) => {
  const [backend] = await mirrorBanner(device({ state: 'mirroring', stream: STREAM }))
  t.notMatch(backend, /s3cret|leaf@/)
  const [unparsable] = await mirrorBanner(device({ state: 'mirroring', stream: STREAM }, 'not a url s3cret'))
  t.equal(unparsable, '  backend (a URL that does not parse) (leaf node; JetStream domain fleet)')
})

t.test("the banner waits for the mirror's first state", async (t) => {
  const late = { backend: { url: 'nats://10.0.0.2:7422', domain: 'fleet' }, mirror: undefined } as {
    backend: unknown
    mirror: MirrorStatus | undefined
  }
  setImmediate(() => (late.mirror = { state: 'off', stream: STREAM }))
  const [, mirror] = await mirrorBanner(late as unknown as Device)
  t.match(mirror, /^  mirror off: /, 'the state that came, not "starting"')
})

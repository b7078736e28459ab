// The gateway's request/reply over one reply subscription (bus/request-mux.ts).
import { connect } from '@nats-io/transport-node'
import t from 'tap'
import { BusTimeoutError, BusUnavailableError } from '../bus/errors.js'
import { RequestMux } from '../bus/request-mux.js'
import { startNats } from './helpers/nats.js'

t.test(
  'replies reach their requests; a silent responder times out, no responder and a closed connection are unavailable',
  async (t) => {
    const nats = await startNats(t.testdir())
    t.teardown(() => nats.stop())
    const responder = await connect({ servers: nats.url })
    const client = await connect({ servers: nats.url })
    t.teardown(() => responder.close())
    responder.subscribe('echo', {
      callback: (_err, msg) => {
        // Answers out of order: the later request's reply comes first.
        const delay = msg.data[0] === 1 ? 30 : 0
        setTimeout(() => msg.respond(msg.data), delay)
      },
    })
    responder.subscribe('silent', { callback: () => undefined })
    await responder.flush()
    const mux = new RequestMux(client, '_INBOX_test')

    const replies = await Promise.all([1, 2, 3].map((n) => mux.request('echo', Uint8Array.of(n), 2000)))
    t.same(
      replies.map((r) => r[0]),
      [1, 2, 3],
      'each reply to its own request',
    )

    // The waits below are far longer than tap's own timeout: a failure that came only with the
    // wait's end would fail the test by that timeout, not pass as the expected error.
    await t.rejects(mux.request('nobody', Uint8Array.of(0), 600_000), BusUnavailableError, 'no responder, at once')
    await t.rejects(mux.request('silent', Uint8Array.of(0), 200), BusTimeoutError, 'a responder that does not answer')

    const pending = mux.request('silent', Uint8Array.of(0), 600_000)
    await client.close()
    await t.rejects(pending, BusUnavailableError, 'a closed connection ends what waits, at once')
    await t.rejects(mux.request('echo', Uint8Array.of(0), 1000), BusUnavailableError, 'and refuses new requests')
  },
)

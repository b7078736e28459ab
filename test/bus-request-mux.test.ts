// The gateway's request/reply over one reply subscription (bus/request-mux.ts).
import { connect } from '@nats-io/transport-node'
import t from 'tap'
import { BusUnavailableError } from '../bus/errors.js'
import { RequestMux } from '../bus/request-mux.js'
import { startNats } from './helpers/nats.js'

t.test(
  'replies reach their requests; no responder, timeouts and a closed connection fail with BusUnavailableError',
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

    // Each failure names its cause: one that waited out its timeout says so.
    await t.rejects(
      mux.request('nobody', Uint8Array.of(0), 5000),
      { name: 'BusUnavailableError', message: 'nobody: no responder' },
      'no responder fails at once, not at the timeout',
    )
    await t.rejects(
      mux.request('silent', Uint8Array.of(0), 200),
      { name: 'BusUnavailableError', message: 'silent: no reply within 200 ms' },
      'a timeout',
    )

    const pending = mux.request('silent', Uint8Array.of(0), 10_000)
    await client.close()
    const closed = await pending.then(
      () => undefined,
      (err: unknown) => err,
    )
    t.type(closed, BusUnavailableError, 'a closed connection ends what waits')
    t.notMatch((closed as Error).message, /no reply within/, 'at once, not at its timeout')
    await t.rejects(mux.request('echo', Uint8Array.of(0), 1000), BusUnavailableError, 'and refuses new requests')
  },
)

// The gateway aborts every upload it does not see through: a chunk the service did not take (a
// token that expired mid-upload, a scope, a slow or missing service) or an end that failed would
// otherwise leave the service's upload open and its pipeline answering 409.
import t from 'tap'
import type { GatewayBus } from '../bus/types.js'
import { BusTimeoutError } from '../bus/errors.js'
import type { CommandReply, CommandRequest } from '../protocol/bus-messages.js'
import { forwardUpload, type UploadBody } from '../gateway/upload.js'

const handler = { kind: 'upload' as const, service: 'upgrade', begin: 'upload_begin_ui', filenames: ['webroot.tar'] }

/** A bus whose upgrade service answers `upload_chunk` and `upload_end` as told; it records every op. */
function fakeBus(answers: { chunk?: () => CommandReply; end?: () => CommandReply }) {
  const ops: string[] = []
  const bus: GatewayBus = {
    readModel: () => undefined,
    request: async (_service: string, op: string, _req: CommandRequest) => {
      ops.push(op)
      if (op === 'upload_begin_ui') return { status: 200, body: { upload: 'ui-1' } }
      if (op === 'upload_chunk') return answers.chunk?.() ?? { status: 200 }
      if (op === 'upload_end') return answers.end?.() ?? { status: 200 }
      return { status: 200 }
    },
  }
  return { bus, ops }
}

/** A body of two chunks. */
function twoChunks(): UploadBody {
  const pieces = [
    { data: Buffer.alloc(8), last: false },
    { data: Buffer.alloc(8), last: true },
  ]
  return { next: async () => pieces.shift() } as unknown as UploadBody
}

const base: CommandRequest = { rid: 'r1', tls: true, bearer: 'token' }
const forward = (bus: GatewayBus) => forwardUpload(bus, handler, base, 16, twoChunks(), 1000)
const status = (code: number) => () => ({ status: code, body: { error: String(code) } })

t.test('a chunk the service answers with anything but 200: the upload is aborted', async (t) => {
  for (const code of [400, 401, 403, 500, 503, 504, 507]) {
    const { bus, ops } = fakeBus({ chunk: status(code) })
    const { reply } = await forward(bus)
    t.equal(reply?.status, code, `${code} is the answer`)
    t.same(ops, ['upload_begin_ui', 'upload_chunk', 'upload_abort'], `${code}: aborted, not ended`)
  }
})

t.test('a chunk that is not answered at all: the upload is aborted', async (t) => {
  const { bus, ops } = fakeBus({
    chunk: () => {
      throw new BusTimeoutError('too slow')
    },
  })
  await t.rejects(forward(bus), BusTimeoutError)
  t.same(ops, ['upload_begin_ui', 'upload_chunk', 'upload_abort'])
})

t.test('an end the service refuses, or that is not answered: the upload is aborted', async (t) => {
  const refused = fakeBus({ end: status(503) })
  t.equal((await forward(refused.bus)).reply?.status, 503)
  t.same(refused.ops, ['upload_begin_ui', 'upload_chunk', 'upload_chunk', 'upload_end', 'upload_abort'])

  const lost = fakeBus({
    end: () => {
      throw new BusTimeoutError('too slow')
    },
  })
  await t.rejects(forward(lost.bus), BusTimeoutError)
  t.same(lost.ops, ['upload_begin_ui', 'upload_chunk', 'upload_chunk', 'upload_end', 'upload_abort'])

  const ended = fakeBus({})
  t.equal((await forward(ended.bus)).reply?.status, 200)
  t.same(ended.ops, ['upload_begin_ui', 'upload_chunk', 'upload_chunk', 'upload_end'], 'an upload that ends is not')
})

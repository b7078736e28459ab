// A refusal before the body is read reaches a client still sending it: the device
// reads the rest and drops it, instead of closing the connection under the client.
import { Agent, request, type RequestOptions } from 'node:https'
import { request as httpRequest } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { bootDevice } from './helpers/device.js'
import { runHemd } from './helpers/hemd-process.js'

const root = mkdtempSync(join(tmpdir(), 'hemd-early-refusal-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))

const IMAGE_SIZE = 16 * 1024 * 1024
const image = Buffer.alloc(IMAGE_SIZE, 7)

interface Outcome {
  status: number
  error: string | undefined
  reusedSocket: boolean
}

/** A whole body sent at once, the way a client that does not wait for `100 Continue` sends it. */
function post(url: string, headers: Record<string, string | number>, body: Buffer, agent?: Agent): Promise<Outcome> {
  const target = new URL(url)
  const options: RequestOptions = { method: 'POST', headers, rejectUnauthorized: false, agent: agent ?? false }
  return new Promise((resolve, reject) => {
    const req = (target.protocol === 'https:' ? request : httpRequest)(target, options, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          error: (JSON.parse(text) as { error?: string }).error,
          reusedSocket: req.reusedSocket,
        }),
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

const badUpload = {
  'content-type': 'text/plain',
  'content-length': IMAGE_SIZE,
  'content-disposition': 'attachment; filename="firmware.bin"',
}

// The device in a process of its own, as clients meet it: a close under a client still sending
// then lost about one answer in six here.
t.test('an upload refused before its body is read: every client still sending gets the answer', async (t) => {
  const device = await runHemd(t, ['--data', join(root, 'upload')])
  for (const base of [device.httpsUrl, device.httpUrl]) {
    const outcomes = []
    for (let i = 0; i < 20; i++)
      outcomes.push(
        await post(`${base}/api/system/upgrade/upload_fw`, badUpload, image).catch(
          (err: NodeJS.ErrnoException) => err.code ?? 'error',
        ),
      )
    t.strictSame(
      new Set(outcomes.map((o) => (typeof o === 'string' ? o : `${o.status} ${o.error}`))),
      new Set(['400 bad_content_type']),
      `${base.split(':')[0]}: 20 of 20 answered`,
    )
  }
})

t.test('after such a refusal the connection carries the next request', async (t) => {
  const device = await bootDevice(t, { dataDir: join(root, 'keep-alive') })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const refused = await post(`${device.httpsUrl}/api/system/upgrade/upload_fw`, badUpload, image, agent)
  t.equal(refused.status, 400)
  const next = await post(
    `${device.httpsUrl}/api/auth/token`,
    { 'content-type': 'application/json', 'content-length': 2 },
    Buffer.from('{}'),
    agent,
  )
  t.equal(next.reusedSocket, true, 'the same connection')
  t.not(next.status, 0)
})

t.test('a JSON body over 7300 bytes: 413 reaches the client still sending it', async (t) => {
  const device = await runHemd(t, ['--data', join(root, 'json')])
  const body = Buffer.alloc(4 * 1024 * 1024, 32)
  for (let i = 0; i < 20; i++) {
    const outcome = await post(
      `${device.httpsUrl}/api/auth/token`,
      { 'content-type': 'application/json', 'content-length': body.length },
      body,
    )
    t.match(outcome, { status: 413, error: 'payload_too_large' }, `try ${i + 1}`)
  }
})

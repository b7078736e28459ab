// What the DIAG front does to a client's bytes on their way to uWS (gateway/request-lines.ts): one space
// before `HTTP/1.1` where the client sent several, every other byte as it came; once it cannot frame a
// request it changes nothing more on that connection; a PROXY protocol signature drops the connection.
import { once } from 'node:events'
import t from 'tap'
import { PROXY_SIGNATURE, proxyHeader } from '../gateway/proxy-header.js'
import { ForgedProxyHeaderError, HEAD_LIMIT, RequestLines } from '../gateway/request-lines.js'

/** What uWS gets for the client's bytes written in these pieces. */
async function through(pieces: readonly string[]): Promise<string> {
  const lines = new RequestLines()
  const out: Buffer[] = []
  lines.on('data', (chunk: Buffer) => out.push(chunk))
  for (const piece of pieces) lines.write(Buffer.from(piece, 'latin1'))
  lines.end()
  await once(lines, 'end')
  return Buffer.concat(out).toString('latin1')
}

const bytewise = (text: string): string[] => [...text]

const spacedGet = 'GET /api/diag/wipe_config   HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
const get = 'GET /api/diag/wipe_config HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

t.test('raw spaces before HTTP/1.1 become one; a line with one passes as it came', async (t) => {
  t.equal(await through([spacedGet]), get)
  t.equal(await through(bytewise(spacedGet)), get, 'a head that comes a byte at a time')
  t.equal(await through([get]), get)
  const post = 'POST /api/auth/token  HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}'
  t.equal(await through([post]), post.replace('token  HTTP', 'token HTTP'), 'any method, its body after it')
  const odd = 'GET /a%20b?x=\xe9  HTTP/1.1\r\nHost: a\r\nX-Tab:\tv \r\n\r\n'
  t.equal(await through([odd]), odd.replace('\xe9  HTTP', '\xe9 HTTP'), 'the target and the fields byte for byte')
})

t.test('pipelined requests: each head found after the body before it, and nothing in a body touched', async (t) => {
  const body = 'GET /inside   HTTP/1.1\r\n\r\n'
  const post = `POST /api/x   HTTP/1.1\r\nHost: a\r\ncontent-length: ${body.length}\r\n\r\n${body}`
  const stream = `${post}${spacedGet}${get}`
  const expected = `${post.replace('x   HTTP', 'x HTTP')}${get}${get}`
  t.equal(await through([stream]), expected, 'in one read')
  t.equal(await through(bytewise(stream)), expected, 'a byte at a time')
})

t.test('a head it cannot frame, and everything after it on the connection, go on unchanged', async (t) => {
  for (const [why, head] of [
    ['chunked', 'POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two lengths', 'POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n'],
    ['a length that is no plain number', 'POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0x1\r\n\r\n'],
    ['a space before the colon', 'POST /a HTTP/1.1\r\nHost: a\r\nContent-Length : 0\r\n\r\n'],
    ['a folded field', 'GET /a HTTP/1.1\r\nHost: a\r\n b\r\n\r\n'],
    ['HTTP/1.0', 'GET /a  HTTP/1.0\r\nHost: a\r\n\r\n'],
    ['a tab in the request line', 'GET /a\tHTTP/1.1\r\nHost: a\r\n\r\n'],
  ] as const) {
    const stream = `${head}${spacedGet}`
    t.equal(await through([stream]), stream, why)
  }
  const long = `GET /a HTTP/1.1\r\nX: ${'a'.repeat(HEAD_LIMIT)}`
  t.equal(await through([long, `\r\n\r\n${spacedGet}`]), `${long}\r\n\r\n${spacedGet}`, 'a head past HEAD_LIMIT')
  t.equal(await through(['GET /a   HTTP/1.1\r\nHo']), 'GET /a   HTTP/1.1\r\nHo', 'a head cut short by the end')
})

t.test('the PROXY protocol signature fails the stream, wherever it is', async (t) => {
  const signature = PROXY_SIGNATURE.toString('latin1')
  for (const [where, pieces] of [
    ['first', [`${signature}${get}`]],
    ['after a request', [get, `${signature}${get}`]],
    ['in a body', [`POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n${signature}`]],
    ['after a head it cannot frame', ['POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n', signature]],
    ['split over two reads', [get.slice(0, -2), `\r\n${signature.slice(0, 5)}`, signature.slice(5)]],
    ['a byte at a time', bytewise(`${get}${signature}`)],
  ] as const) {
    await t.rejects(through(pieces), ForgedProxyHeaderError, where)
  }
})

t.test(
  'proxyHeader: PROXY v2 of TCP over IPv4 or IPv6 (4 or 16 bytes an address), none without addresses',
  async (t) => {
    const v4 = proxyHeader({ remoteAddress: '10.1.2.3', remotePort: 4444, localAddress: '127.0.0.1', localPort: 80 })
    t.same(
      v4,
      Buffer.concat([PROXY_SIGNATURE, Buffer.from('2111000c0a0102037f000001115c0050', 'hex')]),
      'version 2, PROXY, TCP4, 12 bytes: source, destination, their ports',
    )
    const v6 = proxyHeader({
      remoteAddress: '::ffff:127.0.0.2',
      remotePort: 1,
      localAddress: 'fe80::1%lo',
      localPort: 2,
    })
    t.same(
      v6,
      Buffer.concat([
        PROXY_SIGNATURE,
        Buffer.from('21210024', 'hex'),
        Buffer.from('00000000000000000000ffff7f000002', 'hex'),
        Buffer.from('fe800000000000000000000000000001', 'hex'),
        Buffer.from('00010002', 'hex'),
      ]),
      'TCP6, an IPv4-mapped address as its 16 bytes, a zone left out',
    )
    t.equal(proxyHeader({ localAddress: '127.0.0.1', localPort: 80 }), undefined, 'a client already gone')
  },
)

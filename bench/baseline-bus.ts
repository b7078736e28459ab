import { connect } from '@nats-io/transport-node'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import uWS from 'uWebSockets.js'
import { decode, encode } from '../protocol/index.js'
import { NatsServer } from '../bus/index.js'
import { answerJson } from './answer-json.js'
import { parseEncryptRequest } from './encrypt-request.js'
import { listenLocal } from './listen-local.js'
import type { ListeningServer, TlsFiles } from './types.js'

const SUBJECT = 'bench.cmd.echo'

/** What the echo responder answers: the message as its "ciphertext", with a constant IV and tag. */
interface EchoReply {
  ciphertext: Uint8Array
  iv: Uint8Array
  tag: Uint8Array
}

const IV = new Uint8Array(16)
const TAG = new Uint8Array(16)

/**
 * Baseline (b), the bus ceiling: uWS, one NATS request/reply with msgpackr payloads (hemd's
 * codec) to a responder on its own connection, as hemd's gateway and actors each have theirs;
 * no crypto, no token, no journal. Brings its own nats-server.
 */
export async function serveBusBaseline(tls: TlsFiles, workDir: string): Promise<ListeningServer> {
  const dir = join(workDir, 'nats')
  await mkdir(dir, { recursive: true })
  const configFile = join(dir, 'nats.conf')
  await writeFile(configFile, `listen: "127.0.0.1:-1"\nports_file_dir: ${JSON.stringify(dir)}\n`)
  const nats = await NatsServer.start({ configFile, portsFileDir: dir })

  // The options hemd's bus connections use (bus/connection.ts) that bear on throughput.
  const responder = await connect({ servers: nats.url, name: 'bench-echo', noAsyncTraces: true })
  responder.subscribe(SUBJECT, {
    callback: (error, msg) => {
      if (error) return
      const request = decode<{ msg: Uint8Array }>(msg.data)
      msg.respond(encode({ ciphertext: request.msg, iv: IV, tag: TAG } satisfies EchoReply))
    },
  })
  // The subscription must be at the server before the first request can find it.
  await responder.flush()
  const front = await connect({ servers: nats.url, name: 'bench-front', noAsyncTraces: true })

  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  app.post('/*', (res) =>
    answerJson(res, async (raw) => {
      const reply = await front.request(SUBJECT, encode(parseEncryptRequest(raw)), { timeout: 5000 })
      const { ciphertext, iv, tag } = decode<EchoReply>(reply.data)
      const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
      return { ciphertext: b64(ciphertext), iv: b64(iv), tag: b64(tag) }
    }),
  )
  const server = await listenLocal(app)
  return {
    port: server.port,
    close: async () => {
      await server.close()
      await Promise.all([front.close(), responder.close()])
      await nats.stop()
    },
  }
}

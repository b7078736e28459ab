// A login flood from many addresses, in a worker thread of bench/login-flood.ts: each connection
// fetches a challenge and sends a wrong guess on it (well formed, so the device must check it),
// again and again, as fast as the device answers. Its own thread, so that the owner's times taken
// by the main thread are not the flood's event loop's.
import { Agent } from 'node:http'
import { parentPort, workerData } from 'node:worker_threads'
import { buildLoginEjwt, derivePassphraseKeyAsync, type TokenChallenge } from '../client/index.js'
import { tokenExchange } from './token-exchange.js'

/** What the main thread gives the worker. */
export interface FloodSpec {
  /** The device's plain HTTP base URL. */
  base: string
  addresses: number
  connections: number
}

/** What the worker reports once stopped: every answer's status, and when each 401 came (ms since the epoch). */
export interface FloodReport {
  statuses: Record<number, number>
  refusedAt: number[]
}

/** The n-th flooding address: 127.1.0.1 onwards (all of 127/8 is loopback on Linux). */
export function floodAddress(n: number): string {
  return `127.1.${Math.floor(n / 250)}.${(n % 250) + 1}`
}

async function flood({ base, addresses, connections }: FloodSpec): Promise<void> {
  const port = parentPort!
  const first = JSON.parse((await tokenExchange(new Agent(), base, 'GET')).text) as TokenChallenge
  const wrong = await derivePassphraseKeyAsync('not the passphrase of the bench device', first.eid)
  const report: FloodReport = { statuses: {}, refusedAt: [] }
  let stopping = false
  let started = 0
  const agents: Agent[] = []
  const connection = async (localAddress: string) => {
    // One keep-alive socket per connection, from its address.
    const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress })
    agents.push(agent)
    for (let answers = 0; !stopping; answers++) {
      try {
        const challenge = JSON.parse((await tokenExchange(agent, base, 'GET')).text) as TokenChallenge
        const auth = buildLoginEjwt(wrong, challenge, 'system:config', 60)
        const { status } = await tokenExchange(agent, base, 'POST', JSON.stringify({ auth }))
        report.statuses[status] = (report.statuses[status] ?? 0) + 1
        if (status === 401) report.refusedAt.push(Date.now())
      } catch {
        // A reset connection (or the flood's end): the next request opens another.
      }
      if (answers === 0 && ++started === addresses * connections) port.postMessage('flooding')
    }
  }
  const running = Array.from({ length: addresses * connections }, (_, i) => connection(floodAddress(i % addresses)))
  port.once('message', () => {
    stopping = true
    // What waits for an answer is dropped with its socket, as a client that gives up.
    for (const agent of agents) agent.destroy()
    void Promise.all(running).then(() => port.postMessage(report))
  })
}

if (parentPort) void flood(workerData as FloodSpec)

// The device's own nats-server (bus/nats-server.ts): a start that fails says why; one that dies
// after its start is reported, and restarted when asked; a stop is a stop, however often.
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { NatsServer, type NatsServerOptions } from '../bus/nats-server.js'

/** A configuration nats-server starts with, on a free loopback port, its ports file in `dir`. */
async function config(dir: string): Promise<string> {
  const file = join(dir, 'nats.conf')
  await writeFile(file, `listen: "127.0.0.1:-1"\nports_file_dir: ${JSON.stringify(dir)}\n`)
  return file
}

async function started(t: Test, options: Partial<NatsServerOptions> = {}): Promise<NatsServer> {
  const dir = t.testdir()
  const server = await NatsServer.start({ configFile: await config(dir), portsFileDir: dir, ...options })
  t.teardown(() => server.stop())
  return server
}

async function answers(url: string): Promise<boolean> {
  const nc = await connect({ servers: url })
  await nc.flush()
  await nc.close()
  return true
}

t.test('a nats-server that exits at its start is reported with what it said', async (t) => {
  const dir = t.testdir()
  const configFile = join(dir, 'nats.conf')
  await writeFile(configFile, 'listen: {{{\n')
  await t.rejects(NatsServer.start({ configFile, portsFileDir: dir }), {
    name: 'NatsServerError',
    message: /^nats-server exited at start: nats-server: Parse error on line 2/,
  })
})

t.test('without a PATH, nats-server is not found, and the message says how to install it', async (t) => {
  const dir = t.testdir()
  const path = process.env.PATH
  delete process.env.PATH
  try {
    await t.rejects(NatsServer.start({ configFile: await config(dir), portsFileDir: dir }), {
      name: 'NatsServerError',
      message: 'cannot run nats-server: not found or not executable; install it with: sudo apt-get install nats-server',
    })
  } finally {
    process.env.PATH = path
  }
})

t.test('a binary given by its path; a death after the start is reported, and a stop twice is one stop', async (t) => {
  const binary = execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim()
  const exits: [number | null, NodeJS.Signals | null][] = []
  let exited!: () => void
  const death = new Promise<void>((resolve) => (exited = resolve))
  const server = await started(t, { binary, onExit: (code, signal) => (exits.push([code, signal]), exited()) })
  t.ok(await answers(server.url))
  process.kill(server.pid!, 'SIGKILL')
  await death
  t.same(exits, [[null, 'SIGKILL']], 'reported, and not restarted: nobody asked')
  await server.stop()
  await server.stop()
  t.same(exits, [[null, 'SIGKILL']], 'a stop of a dead server is no death')
})

t.test('a nats-server that dies is restarted, on a port of its own again', async (t) => {
  let restarted!: (pid: number) => void
  const restart = new Promise<number>((resolve) => (restarted = resolve))
  const server = await started(t, { restart: true, onRestart: (pid) => restarted(pid) })
  const first = server.pid!
  // The restart's timer holds no process up (a device's other work does): the test's wait must.
  const waiting = setInterval(() => undefined, 60_000)
  process.kill(first, 'SIGKILL')
  const pid = await restart
  clearInterval(waiting)
  t.not(pid, first)
  t.equal(server.pid, pid)
  t.ok(await answers(server.url), 'and it answers')
})

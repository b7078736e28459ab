// hem-cloud in this test's process: its own data dir (an own nats-server with JetStream), a port the
// kernel picks, the development backend key, a domain CA made for the run, and a clock the test sets.
import { createPrivateKey } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { DomainCa, startCloud, type CloudOptions, type RunningCloud } from '../../cloud/index.js'
import { toPem } from '../../hal/x509/pem.js'
import { silentLogger } from './logger.js'
import { makeCa, type TestCa } from './x509-fixtures.js'

export const backendKey = createPrivateKey(readFileSync(new URL('../../deploy/keys/backend-dev.pem', import.meta.url)))
export const ZONE = 'ence.do'
export const AUTHKEY = 'test-authkey-1'

/** Milliseconds since the epoch that move only when the test says. */
export interface CloudClock {
  ms: number
}

export interface TestCloud {
  cloud: RunningCloud
  clock: CloudClock
  ca: TestCa
  dataDir: string
  /** Stops this instance and starts another on the same data dir (and the same port). */
  restart(): Promise<RunningCloud>
}

let caOnce: Promise<TestCa> | undefined

/** A cloud stopped, and its data dir removed, at the test's end. */
export async function testCloud(
  t: Test,
  options: Partial<CloudOptions> = {},
  domain: Partial<NonNullable<CloudOptions['domain']>> = {},
): Promise<TestCloud> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hem-cloud-test-'))
  const ca = await (caOnce ??= makeCa('Cloud Test Domain CA'))
  const domainCa = await DomainCa.load(
    toPem('CERTIFICATE', ca.cert),
    ca.key.export({ type: 'pkcs8', format: 'pem' }) as string,
  )
  const clock: CloudClock = { ms: Date.now() }
  const start = (port: number) =>
    startCloud({
      host: '127.0.0.1',
      port,
      backendKey,
      domain: { ca: domainCa, zone: ZONE, predefined: ['my'], authkeys: [AUTHKEY], ...domain },
      store: { dataDir },
      testMode: false,
      clock: () => clock.ms,
      logger: silentLogger,
      ...options,
    })
  const handle: TestCloud = {
    cloud: await start(0),
    clock,
    ca,
    dataDir,
    async restart() {
      await handle.cloud.stop()
      handle.cloud = await start(handle.cloud.port)
      return handle.cloud
    },
  }
  t.teardown(async () => {
    await handle.cloud.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return handle
}

// Model-based tests of the provisioning machine (P): every path generated from
// machines/provisioning.ts runs on its own device, driven by the factory's own client
// (hem-factory provision); after each step the journal holds exactly the step's TRANSITION record
// and the attestation routes answer as the state says.
import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { decodeBase64 } from '../protocol/base64.js'
import { main as factoryMain } from '../cli/hem-factory/factory-cli.js'
import { parseGenuine } from '../hal/x509/genuine-statement.js'
import { machineRegistry } from '../machines/registry.js'
import { bootDevice } from './helpers/device.js'
import { call, type Answer } from './helpers/http.js'
import { checkCoverage, checkDrivers, modelPaths } from './helpers/model-paths.js'
import { checkObservations, walkPaths, type ModelRun } from './helpers/model-walk.js'

const { machine: provisioningMachine, version: provisioningVersion } = machineRegistry.provisioning

const factoryCa = new X509Certificate(readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url)))

interface Factory {
  dataDir: string
  base: string
  devid: string
}

const ATTESTATION = '/api/system/config/attestation'
const PROVISIONING = '/api/system/config/provisioning'

const attestation = (d: Factory) => call(`${d.base}${ATTESTATION}`)
const provision = (d: Factory, body: unknown) =>
  call(`${d.base}${PROVISIONING}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** The `genuine` of an attestation answer, parsed. */
function genuineOf(t: Test, answer: Answer) {
  const genuine = parseGenuine(decodeBase64(answer.json?.genuine) ?? new Uint8Array())
  t.ok(genuine, 'genuine parses as a statement')
  return genuine
}

const run: ModelRun<Factory> = {
  spec: { machine: provisioningMachine, version: provisioningVersion },
  async boot(t) {
    const device = await bootDevice(t, { dataDir: t.testdir() })
    return { dataDir: device.dataDir, base: device.httpUrl!, devid: device.devid }
  },
  drivers: {
    PROVISION: async (d) => {
      let err = ''
      const io = { stdout: { write: () => true }, stderr: { write: (s: string) => ((err += s), true) } }
      if ((await factoryMain(['provision', '--url', d.base], io)) !== 0)
        throw new Error(`hem-factory provision: ${err}`)
    },
  },
  observations: {
    unprovisioned: async (t, d) => {
      const answer = await attestation(d)
      t.equal(answer.status, 200, 'GET attestation: 200')
      t.strictSame(Object.keys(answer.json).sort(), ['csr', 'genuine'], 'the request: {genuine, csr}')
      t.match(genuineOf(t, answer), { kind: 'device', devid: d.devid }, 'the device vouches for itself')
    },
    provisioned: async (t, d) => {
      const answer = await attestation(d)
      t.strictSame(Object.keys(answer.json).sort(), ['crt', 'genuine'], 'the answer: {crt, genuine}')
      t.ok(new X509Certificate(decodeBase64(answer.json.crt)!).checkIssued(factoryCa), 'crt issued by the factory CA')
      t.match(genuineOf(t, answer), { kind: 'factory', devid: d.devid }, 'the factory vouches for it')
      t.match(await provision(d, answer.json), { status: 406 }, 'a second provisioning: 406')
    },
  },
}

const drivable = Object.keys(run.drivers)
const options = { drivable }
const paths = modelPaths(provisioningMachine, options)

t.test('every event has a driver and every state an observation', async (t) => {
  checkDrivers(t, provisioningMachine, drivable, {})
  checkCoverage(t, provisioningMachine, paths, options)
  checkObservations(t, run)
})

t.test(`${paths.length} paths, each on its own device`, async (t) => walkPaths(t, run, paths, 3))

t.test('E has no enclave to provision: both routes answer 404', async (t) => {
  const device = await bootDevice(t, { variant: 'E', dataDir: t.testdir() })
  const d = { dataDir: device.dataDir, base: device.httpUrl!, devid: device.devid }
  t.equal((await attestation(d)).status, 404)
  t.equal((await provision(d, {})).status, 404)
})

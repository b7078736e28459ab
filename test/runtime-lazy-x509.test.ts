// What the runtime loads at boot: libraries needed only rarely wait until they are needed.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'

// @peculiar/x509 (with reflect-metadata and its ASN.1 schemas) was 0.19 s of every boot's 0.48 s
// of module loading, for the CSRs a device makes rarely: it is loaded at the first one.
t.test('the runtime loads no X.509 library until it makes a CSR', async (t) => {
  const startDevice = new URL('../dist/runtime/start-device.js', import.meta.url).href
  const probe = `await import(${JSON.stringify(startDevice)}); process.stdout.write(typeof Reflect.getMetadata)`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe])
  t.equal(stdout, 'undefined', 'reflect-metadata, which @peculiar/x509 needs first, is not loaded')
})

// What the runtime loads at boot: libraries needed only rarely wait until they are needed.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'

// @peculiar/x509 (with reflect-metadata and its ASN.1 schemas) was 0.19 s of every boot's 0.48 s
// of module loading, and about 0.2 s more of every HAL open for the attestation CSR: the device's
// CSRs are written with node:crypto, and nothing the runtime loads to boot needs the library.
t.test('the runtime loads no X.509 library, not even to open a new P device', async (t) => {
  const url = (path: string) => JSON.stringify(new URL(path, import.meta.url).href)
  const probe = `await import(${url('../dist/runtime/start-device.js')})
    const { openHal } = await import(${url('../dist/hal/index.js')})
    const firmware = { version: '1.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }
    const hal = await openHal({ variant: 'P', dataDir: ${JSON.stringify(t.testdir())}, firmware })
    hal.enclave.attestation()
    await hal.enclave.tlsCsr('hem.example')
    await hal.close()
    process.stdout.write(typeof Reflect.getMetadata)`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe])
  t.equal(stdout, 'undefined', 'reflect-metadata, which @peculiar/x509 needs first, is not loaded')
})

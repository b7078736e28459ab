import { hostClock } from '../hal/sim/host-clock.js'
import { X509Certificate, createHash, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { HalCorruptError, HalVariantMismatchError, openHal, type SignedComponent } from '../hal/index.js'

function firmware(version = '2.0.0'): SignedComponent {
  const { privateKey } = generateKeyPairSync('ed25519')
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' })
  const signature = new Uint8Array(sign(null, Buffer.from(version), privateKey))
  return { version, publicKey: new Uint8Array(Buffer.from(x ?? '', 'base64url')), signature }
}

function ed25519PublicKey(raw: Uint8Array) {
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') },
    format: 'jwk',
  })
}

t.test('first open creates the device, the next open is the same device', async (t) => {
  const dataDir = t.testdir()
  const first = await openHal({ variant: 'P', dataDir, firmware: firmware() })
  await first.close()
  const second = await openHal({ variant: 'P', dataDir, firmware: firmware() })
  t.teardown(() => second.close())

  t.match(first.devid, /^[0-9a-f]{16}$/)
  t.equal(second.devid, first.devid)
  t.same(second.enclave.logSigner.publicKey, first.enclave.logSigner.publicKey)
  t.same(second.enclave.identityPublicKey, first.enclave.identityPublicKey)
  t.same(second.enclave.tlsCredentials().certDer, first.enclave.tlsCredentials().certDer)
  t.equal(second.enclave.genuineId, first.enclave.genuineId)
  t.same(second.storage, first.storage)
  t.same(second.boot.bootloader, first.boot.bootloader)
  t.equal(first.enclave.identityPublicKey.length, 32)
  t.equal(first.runDir, join(dataDir, 'run'))

  const stored = JSON.parse(await readFile(join(dataDir, 'device.json'), 'utf8'))
  t.match(stored, { variant: 'P', devid: first.devid, genuineId: first.enclave.genuineId })
})

t.test('P storage geometry and genuine id', async (t) => {
  const hal = await openHal({ variant: 'P', dataDir: t.testdir(), firmware: firmware() })
  t.teardown(() => hal.close())
  t.equal(hal.variant, 'P')
  t.match(hal.storage, { capacitySectors: 15_523_840, disk0Sectors: 4_194_304, disk1Sectors: 11_264_000 })
  t.match(hal.storage.csd, /^[0-9a-f]{32}$/)
  t.match(hal.storage.cid, /^[0-9a-f]{32}$/)
  t.not(hal.storage.csd, hal.storage.cid)
  t.match(hal.enclave.genuineId, /^SIM-[0-9a-f]{16}$/)
})

t.test('E has no storage and no genuine id', async (t) => {
  const hal = await openHal({ variant: 'E', dataDir: t.testdir(), firmware: firmware() })
  t.teardown(() => hal.close())
  t.equal(hal.variant, 'E')
  t.same(hal.storage, { capacitySectors: 0, disk0Sectors: 0, disk1Sectors: 0, csd: '', cid: '' })
  t.equal(hal.enclave.genuineId, undefined)
})

t.test('opening a device as the other variant is refused', async (t) => {
  const dataDir = t.testdir()
  await (await openHal({ variant: 'P', dataDir, firmware: firmware() })).close()
  const err = await openHal({ variant: 'E', dataDir, firmware: firmware() }).catch((e: unknown) => e)
  t.type(err, HalVariantMismatchError)
  t.match((err as Error).message, `data dir ${dataDir} holds a P device; cannot open it as E`)
  // The refusal must not leave the data dir locked.
  await (await openHal({ variant: 'P', dataDir, firmware: firmware() })).close()
})

t.test('a corrupt device.json is reported, never replaced', async (t) => {
  const dataDir = t.testdir()
  await (await openHal({ variant: 'P', dataDir, firmware: firmware() })).close()
  const path = join(dataDir, 'device.json')
  const valid = await readFile(path, 'utf8')
  await writeFile(path, '{"variant": "P", "devid": ')
  await t.rejects(openHal({ variant: 'P', dataDir, firmware: firmware() }), HalCorruptError)
  t.equal(await readFile(path, 'utf8'), '{"variant": "P", "devid": ')

  await writeFile(path, JSON.stringify({ ...JSON.parse(valid), devid: 'xyz' }))
  await t.rejects(openHal({ variant: 'P', dataDir, firmware: firmware() }), {
    name: 'HalCorruptError',
    message: /devid/,
  })
})

t.test('a missing enclave key of an existing device is reported', async (t) => {
  const dataDir = t.testdir()
  await (await openHal({ variant: 'P', dataDir, firmware: firmware() })).close()
  await writeFile(join(dataDir, 'enclave', 'log-signing.key.pem'), 'not a key')
  await t.rejects(openHal({ variant: 'P', dataDir, firmware: firmware() }), {
    name: 'HalCorruptError',
    message: /log-signing/,
  })
})

t.test('boot slots: slot A, the running firmware and a signed sim bootloader', async (t) => {
  const dataDir = t.testdir()
  const v2 = firmware('2.0.0')
  const first = await openHal({ variant: 'P', dataDir, firmware: v2 })
  await first.close()
  t.equal(first.boot.active, 'A')
  t.same(first.boot.firmware, v2)
  const { bootloader } = first.boot
  t.equal(bootloader.version, '1.0.0-sim')
  const digest = createHash('sha256').update('hem-bootloader').update('1.0.0-sim').digest()
  t.ok(verify(null, digest, ed25519PublicKey(bootloader.publicKey), bootloader.signature))

  const v3 = firmware('3.0.0')
  const second = await openHal({ variant: 'P', dataDir, firmware: v3 })
  t.teardown(() => second.close())
  t.same(second.boot.firmware, v3)
  t.same(second.boot.bootloader, bootloader)
  const stored = JSON.parse(await readFile(join(dataDir, 'boot', 'slots.json'), 'utf8'))
  t.equal(stored.firmware.version, '3.0.0')
})

t.test('injected clock and entropy make the device deterministic', async (t) => {
  let counter = 0
  const entropy = { read: (n: number) => Uint8Array.from({ length: n }, () => counter++ & 0xff) }
  const clock = { ...hostClock, now: () => Date.UTC(2030, 0, 2), monotonic: () => 5, isSet: () => false }
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware: firmware(), clock, entropy })
  t.teardown(() => hal.close())
  t.equal(hal.clock, clock)
  t.equal(hal.devid, '0001020304050607', 'the injected source, behind the health tests')
  t.equal(counter % 512, 0, 'drawn whole windows at a time, each tested before use')
  const stored = JSON.parse(await readFile(join(dataDir, 'device.json'), 'utf8'))
  t.equal(stored.createdAt, '2030-01-02T00:00:00.000Z')
  const cert = new X509Certificate(Buffer.from(hal.enclave.tlsCredentials().certDer))
  t.equal(cert.validFrom, 'Jan  2 00:00:00 2030 GMT')
  t.equal(cert.validTo, 'Jan  2 00:00:00 2050 GMT', 'GeneralizedTime from 2050 on')
})

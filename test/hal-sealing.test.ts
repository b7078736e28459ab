import t from 'tap'
import { stat } from 'node:fs/promises'
import { openHal, UnsealError } from '../hal/index.js'
import { builtFirmware } from './helpers/device.js'

const aad = new TextEncoder().encode('key 0123456789abcdef0123456789abcdef')

async function open(dataDir: string, lock = true) {
  return openHal({ variant: 'E', dataDir, firmware: await builtFirmware(), lock })
}

t.test('sealed data opens with the same aad on the same device, across opens and processes of it', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(dataDir)
  const secret = new Uint8Array(32).fill(7)
  const sealed = await hal.enclave.sealer('keys').seal(secret, aad)
  t.equal(sealed.length, 12 + 32 + 16, 'nonce, ciphertext, tag')
  t.notOk(Buffer.from(sealed).includes(Buffer.from(secret)), 'the plaintext is not in the sealed bytes')
  t.not(
    Buffer.from(await hal.enclave.sealer('keys').seal(secret, aad)).toString('hex'),
    Buffer.from(sealed).toString('hex'),
    'a fresh nonce each time',
  )
  t.same(await hal.enclave.sealer('keys').unseal(sealed, aad), secret)
  t.equal((await stat(`${dataDir}/enclave/sealing.key`)).mode & 0o777, 0o600)
  const child = await open(dataDir, false)
  t.same(
    await child.enclave.sealer('keys').unseal(sealed, aad),
    secret,
    'a --split service process of the device opens it too',
  )
  await child.close()
  await hal.close()
  const again = await open(dataDir)
  t.same(await again.enclave.sealer('keys').unseal(sealed, aad), secret, 'after a reboot')
  await again.close()
})

t.test('altered, truncated, rebound or foreign sealed data does not open', async (t) => {
  // One testdir per test: a second call would empty the first.
  const dir = t.testdir()
  const hal = await open(`${dir}/a`)
  const other = await open(`${dir}/b`)
  t.teardown(async () => {
    await hal.close()
    await other.close()
  })
  const sealed = await hal.enclave.sealer('keys').seal(new Uint8Array([1, 2, 3]), aad)
  for (let i = 0; i < sealed.length; i += 5) {
    const flipped = Uint8Array.from(sealed)
    flipped[i]! ^= 1
    await t.rejects(hal.enclave.sealer('keys').unseal(flipped, aad), UnsealError, `byte ${i} flipped`)
  }
  await t.rejects(hal.enclave.sealer('keys').unseal(sealed.subarray(0, 20), aad), UnsealError, 'truncated')
  await t.rejects(hal.enclave.sealer('keys').unseal(sealed, new Uint8Array([9])), UnsealError, "another record's aad")
  await t.rejects(other.enclave.sealer('keys').unseal(sealed, aad), UnsealError, 'another device')
  await t.rejects(
    hal.enclave.sealer('disks').unseal(sealed, aad),
    UnsealError,
    'another purpose: the disks cannot open the key repository',
  )
})

import t, { type Test } from 'tap'
import { readFile, writeFile, appendFile } from 'node:fs/promises'
import { generateKeyPairSync } from 'node:crypto'
import { join } from 'node:path'
import { FirmwareManifestError, loadFirmware, signBuild } from '../image/firmware-manifest.js'

const vendorKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

function build(t: Test) {
  return t.testdir({ bin: { 'hemd.js': 'console.log(1)\n' }, 'lib.js': 'export {}\n' })
}

t.test('a signed build loads with its version, key and signature', async (t) => {
  const dir = build(t)
  const manifest = await signBuild(dir, '1.2.3', vendorKey)
  const fw = await loadFirmware(dir)
  t.equal(fw.version, '1.2.3')
  t.equal(Buffer.from(fw.publicKey).toString('base64'), manifest.publicKey)
  t.equal(fw.signature.length, 64)
})

t.test('a changed, added or renamed file refuses to boot', async (t) => {
  for (const change of [
    (dir: string) => appendFile(join(dir, 'lib.js'), '//'),
    (dir: string) => writeFile(join(dir, 'extra.js'), ''),
  ]) {
    const dir = build(t)
    await signBuild(dir, '1.2.3', vendorKey)
    await change(dir)
    await t.rejects(loadFirmware(dir), FirmwareManifestError)
  }
})

t.test('a forged version or signature refuses to boot', async (t) => {
  const dir = build(t)
  await signBuild(dir, '1.2.3', vendorKey)
  const file = join(dir, 'firmware.json')
  const manifest = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, JSON.stringify({ ...manifest, version: '9.9.9' }))
  await t.rejects(loadFirmware(dir), /does not verify/)
  await writeFile(file, JSON.stringify({ ...manifest, signature: 'AAAA' }))
  await t.rejects(loadFirmware(dir), /malformed/)
  await t.rejects(loadFirmware(t.testdir({})), /run npm run build/)
})

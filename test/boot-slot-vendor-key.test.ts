// The simulated bootloader runs an installed slot only if its build is signed with the
// installation's vendor key, not merely with the key its own manifest names.
import { generateKeyPairSync } from 'node:crypto'
import { access, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { createBootSlots, SimFirmwareSlots } from '../hal/sim/boot-slots.js'
import { developmentTrust } from '../hal/trust-anchors.js'
import { signBuild } from '../image/firmware-manifest.js'
import { runLauncher } from '../runtime/launcher.js'
import { builtFirmware, repoRoot } from './helpers/device.js'
import { silentLogger } from './helpers/logger.js'
import { DEV_VENDOR_PEM } from './helpers/upload.js'

const stranger = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

/** A build whose runtime only leaves a mark that it ran, then exits as a clean stop does. */
async function markingBuild(dir: string, marks: string, name: string, vendorPem?: string): Promise<void> {
  await mkdir(join(dir, 'bin'), { recursive: true })
  // Valid as a CommonJS script and as an ES module: the tree sits under this package's "type".
  const script = `import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(join(marks, name))}, ''))\n`
  await writeFile(join(dir, 'bin', 'hemd.js'), script)
  if (vendorPem) await signBuild(dir, `9.9.9-${name}`, vendorPem)
}

async function device(t: Test, slotB: { signer: string; trial: boolean }) {
  const top = t.testdir()
  const dataDir = join(top, 'data')
  const marks = join(top, 'marks')
  await mkdir(marks)
  const bootDir = join(dataDir, 'boot')
  await createBootSlots(bootDir, await builtFirmware())
  await new SimFirmwareSlots(bootDir, 'A').install((dir) => markingBuild(dir, marks, 'B', slotB.signer), '9.9.9', 0)
  if (!slotB.trial) {
    const stored = JSON.parse(await readFile(join(bootDir, 'slots.json'), 'utf8')) as Record<string, unknown>
    const { trial: _armed, ...rest } = stored
    await writeFile(join(bootDir, 'slots.json'), JSON.stringify({ ...rest, active: 'B' }))
  }
  const factoryDir = join(top, 'factory')
  await markingBuild(factoryDir, marks, 'factory')
  const code = await runLauncher({
    dataDir,
    factoryDir,
    nodeModules: join(repoRoot, 'node_modules'),
    argv: [],
    vendorKey: developmentTrust().vendorKey,
    logger: silentLogger,
  })
  const ran = async (name: string) =>
    access(join(marks, name)).then(
      () => true,
      () => false,
    )
  const slots = JSON.parse(await readFile(join(bootDir, 'slots.json'), 'utf8')) as Record<string, unknown>
  return { code, ranB: await ran('B'), ranFactory: await ran('factory'), slots }
}

t.test('a trial slot signed by another key is never run: the device rolls back to the factory build', async (t) => {
  const { code, ranB, ranFactory, slots } = await device(t, { signer: stranger, trial: true })
  t.notOk(ranB, "none of the slot's code ran")
  t.ok(ranFactory, 'the active slot booted instead')
  t.equal(code, 0)
  t.match(slots, { active: 'A', outcome: { result: 'rolled_back', slot: 'B' } })
})

t.test('an active slot signed by another key is refused: the bootloader stops', async (t) => {
  const { code, ranB, ranFactory } = await device(t, { signer: stranger, trial: false })
  t.notOk(ranB, "none of the slot's code ran")
  t.notOk(ranFactory)
  t.equal(code, 1)
})

t.test('a slot signed with the vendor key runs', async (t) => {
  const { ranB } = await device(t, { signer: await DEV_VENDOR_PEM, trial: true })
  t.ok(ranB)
})

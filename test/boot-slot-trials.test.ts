// The simulated bootloader's record of a trial boot: booted once, then confirmed or rolled back,
// and a slots.json it cannot trust reported as corrupt rather than guessed at.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import {
  abandonTrial,
  chooseBoot,
  commitTrial,
  createBootSlots,
  loadBootSlots,
  SimFirmwareSlots,
} from '../hal/sim/boot-slots.js'
import type { SignedComponent } from '../hal/types.js'

const firmware: SignedComponent = { version: '1.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }

/** A build that holds one file naming its version. */
const build = (version: string) => async (dir: string) => {
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'VERSION'), version)
}

async function slotsJson(dir: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dir, 'slots.json'), 'utf8')) as Record<string, unknown>
}

t.test('a trial never confirmed is rolled back at the next boot, and counts at its level meanwhile', async (t) => {
  const dir = t.testdir()
  await createBootSlots(dir, firmware)
  const slots = new SimFirmwareSlots(dir, 'A')
  t.equal(await slots.install(build('2.0.0'), '2.0.0', 5), 'B', 'the slot not running')
  t.same(await chooseBoot(dir), { slot: 'B', trial: true })
  t.equal(await slots.floor(), 5, 'the trial being confirmed raises the floor already')
  await t.rejects(slots.install(build('3.0.0'), '3.0.0', 6), {
    name: 'HalError',
    message: 'a trial boot is still being confirmed; install after it',
  })
  t.equal(await readFile(join(dir, 'slots', 'B', 'VERSION'), 'utf8'), '2.0.0', 'the way back was not overwritten')

  const rolledBack = { result: 'rolled_back', slot: 'B', version: '2.0.0' }
  t.same(await chooseBoot(dir), { slot: 'A', trial: false, rolledBack }, 'still trying at the next boot')
  t.equal(await slots.floor(), 0, 'the floor is back where it was')
  t.equal(await commitTrial(dir), undefined, 'no trial left to commit')
  t.equal(await abandonTrial(dir), undefined, 'nor to abandon')
  t.same(await slots.takeOutcome(), rolledBack)
  t.equal(await slots.takeOutcome(), undefined, 'told once')
  t.match(await slotsJson(dir), { active: 'A', floor: 0 })
})

t.test('running slot B, an install goes to slot A', async (t) => {
  const dir = t.testdir()
  await createBootSlots(dir, firmware)
  t.equal(await new SimFirmwareSlots(dir, 'B').install(build('2.0.0'), '2.0.0', 1), 'A')
  t.match(await slotsJson(dir), { active: 'A', trial: { slot: 'A', version: '2.0.0', level: 1 } })
})

t.test('a slots.json that cannot be trusted is corrupt, and nothing is booted from it', async (t) => {
  const dir = t.testdir()
  await createBootSlots(dir, firmware)
  const good = await slotsJson(dir)
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['an unknown active slot', { ...good, active: 'C' }, /active slot is "C"/],
    ['a negative floor', { ...good, floor: -1 }, /the floor is not a non-negative integer/],
    ['a fractional floor', { ...good, floor: 1.5 }, /the floor is not a non-negative integer/],
  ]
  for (const [what, stored, message] of cases) {
    await writeFile(join(dir, 'slots.json'), JSON.stringify(stored))
    await t.rejects(chooseBoot(dir), { name: 'HalCorruptError', message }, what)
  }

  const bootloader = good.bootloader as Record<string, unknown>
  const components: [string, Record<string, unknown>, RegExp][] = [
    ['no bootloader version', { ...bootloader, version: undefined }, /the bootloader version is missing/],
    ['a public key not in hex', { ...bootloader, publicKey: 'zz' }, /bootloader publicKey is not hex/],
    ['an odd-length signature', { ...bootloader, signature: 'abc' }, /bootloader signature is not hex/],
  ]
  for (const [what, component, message] of components) {
    await writeFile(join(dir, 'slots.json'), JSON.stringify({ ...good, bootloader: component }))
    await t.rejects(loadBootSlots(dir, firmware), { name: 'HalCorruptError', message }, what)
  }
})

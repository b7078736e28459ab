import { timingSafeEqual } from 'node:crypto'
import type { Logger } from 'pino'
import { extractArchive, HEADER_BYTES, loadFirmware } from '../../image/index.js'
import type { Hal } from '../../hal/index.js'
import type { UpgradeKind } from '../../machines/index.js'
import { checkStaged } from './check-staged.js'

/** The staged image may not be installed (gone, changed, or no bootable build): the client's 406, not a fault. */
export class RefusedAtInstall extends Error {
  override readonly name = 'RefusedAtInstall'
}

/**
 * Checks the staged bytes again and unpacks exactly those: what was verified is what is installed.
 * Firmware goes to the inactive slot (armed for a trial boot), the management app replaces the served one.
 */
export async function unpackStaged(
  o: { hal: Hal; logger: Logger },
  kind: UpgradeKind,
  verifiedSha256: string,
): Promise<{ version: string; sha256: string }> {
  const { hal } = o
  const staged = await hal.staging.staged(kind)
  if (!staged) throw new RefusedAtInstall('the staged image is gone')
  try {
    const verdict = await checkStaged(hal, kind, staged)
    if (!verdict.ok || verdict.sha256 !== verifiedSha256)
      throw new RefusedAtInstall('the staged image changed after its check')
    const payload = { read: (position: number, length: number) => staged.read(HEADER_BYTES + position, length) }
    const extract = (dir: string) =>
      extractArchive(payload, { length: verdict.header.payloadLength }, dir).then(() => undefined)
    const { version, floor } = verdict.header
    if (kind === 'fw') {
      const unpack = async (dir: string) => {
        await extract(dir)
        await bootable(o, dir, version)
      }
      await hal.firmwareSlots.install(unpack, version, floor)
    } else await hal.webroot!.install(extract, verdict.sha256)
    return { version, sha256: verdict.sha256 }
  } finally {
    await staged.close()
  }
}

/** What the bootloader will check before it runs the slot, checked before the slot is armed. */
async function bootable(o: { hal: Hal; logger: Logger }, dir: string, version: string): Promise<void> {
  let build
  try {
    build = await loadFirmware(dir)
  } catch (err) {
    // The bootloader's reason names the slot's path on the device: the ops log has it, the client does not.
    o.logger.warn({ err: (err as Error).message }, 'an image to install holds no bootable build')
    throw new RefusedAtInstall('the image holds no bootable build (a signed firmware manifest matching its files)')
  }
  if (build.version !== version || !timingSafeEqual(build.publicKey, o.hal.vendorKey)) {
    throw new RefusedAtInstall('the build in the image is not the version, or not from the vendor, its header names')
  }
}

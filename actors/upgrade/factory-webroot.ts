import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Logger } from 'pino'
import type { Hal } from '../../hal/index.js'
import { bytesSource, checkImage, extractArchive, HEADER_BYTES, MAX_IMAGE_BYTES } from '../../image/index.js'
import { LogResult, LogType } from '../../protocol/index.js'
import type { JournalPort } from '../host/index.js'

/**
 * A P device's first management app: the factory image its build ships (a signed ui image),
 * installed at a start that finds no app installed. That is the device's first start, or a later
 * one while no install ever succeeded; once an app is current (this one, or an owner's
 * `install_ui`) it is never touched again, so the owner's choice survives every reboot.
 *
 * The image is checked as an uploaded one is (vendor key, kind, hardware, hashes, archive), on
 * bytes read once into memory, so the bytes unpacked are the bytes verified whatever happens to
 * the file meanwhile. One that is missing or does not verify installs nothing: the device boots
 * without an app (`/` is 404) and the ops log says why in one warning. The install is journaled as
 * an UPGRADE of kind `ui` with `source: 'factory'` before the app is unpacked (decide, append, act);
 * an unpack that fails adds the same record as ERROR. A journal that takes no record fails the start,
 * as every boot record does.
 */
export async function installFactoryWebroot(
  o: { hal: Hal; journal: JournalPort; logger: Logger },
  image: string,
): Promise<void> {
  const { hal, journal, logger } = o
  const store = hal.webroot
  if (!store || store.current()) return
  const refuse = (why: string) =>
    logger.warn({ image, why }, 'the factory management app is not installed: / stays 404 until an install_ui')
  let bytes: Buffer
  try {
    bytes = await readImage(image)
  } catch (err) {
    return refuse((err as Error).message)
  }
  const verdict = await checkImage(bytesSource(bytes), bytes.length, {
    vendorKey: hal.vendorKey,
    kind: 'ui',
    variant: hal.variant,
  })
  if (!verdict.ok) return refuse(`${verdict.reason}: ${verdict.message}`)
  const record = { source: 'factory', kind: 'ui', version: verdict.header.version, sha256: verdict.sha256 }
  await journal.append([{ type: LogType.UPGRADE, result: LogResult.OK, data: record }])
  const payload = bytesSource(bytes, HEADER_BYTES)
  try {
    await store.install(async (dir) => {
      await extractArchive(payload, { length: verdict.header.payloadLength }, dir)
    }, verdict.sha256)
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'the factory management app could not be unpacked')
    await journal.append([{ type: LogType.UPGRADE, result: LogResult.ERROR, data: record }])
  }
}

/** At most an image's size, from a regular file only (a FIFO put in its place cannot hold the start up). */
async function readImage(path: string): Promise<Buffer> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stat = await file.stat()
    if (!stat.isFile()) throw new Error('not a regular file')
    if (stat.size > MAX_IMAGE_BYTES) throw new Error(`${stat.size} bytes, over the ${MAX_IMAGE_BYTES} of an image`)
    const bytes = Buffer.alloc(stat.size)
    const { bytesRead } = await file.read(bytes, 0, stat.size, 0)
    // A file cut short meanwhile fails the check's length.
    return bytes.subarray(0, bytesRead)
  } finally {
    await file.close()
  }
}

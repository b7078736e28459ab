// A fake camera for Chromium: a y4m video (YUV4MPEG2, 4:2:0, the raw format its fake capture device reads) showing a
// QR code, black modules on white with the quiet zone the standard asks for.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import QRCode from 'qrcode'

const MODULE_PX = 4
const QUIET_MODULES = 4
const BLACK = 16
const WHITE = 235

/** A QR code's modules as the `qrcode` package gives them: dark or not, by row and column. */
export interface QrModules {
  size: number
  get(row: number, col: number): boolean | number
}

/**
 * Writes a video of `frames` frames of the QR code of `code` (its text, or its modules as a page drew them) centred
 * on white, or of white alone when `code` is undefined, into a folder of its own (t.testdir() is the device's),
 * removed at the test's end; returns the Chromium flags that make it the camera.
 */
export async function qrVideo(t: Test, code: string | QrModules | undefined, frames = 2): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'authapp-camera-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'camera.y4m')
  const modules =
    code === undefined ? { size: 21, get: () => false } : typeof code === 'string' ? QRCode.create(code).modules : code
  const side = (modules.size + 2 * QUIET_MODULES) * MODULE_PX
  const width = side + (side % 2)
  const luma = Buffer.alloc(width * width, WHITE)
  for (let row = 0; row < modules.size; row++)
    for (let col = 0; col < modules.size; col++) {
      if (!modules.get(row, col)) continue
      for (let y = 0; y < MODULE_PX; y++) {
        const start = ((row + QUIET_MODULES) * MODULE_PX + y) * width + (col + QUIET_MODULES) * MODULE_PX
        luma.fill(BLACK, start, start + MODULE_PX)
      }
    }
  const chroma = Buffer.alloc((width / 2) * (width / 2) * 2, 128)
  const frame = Buffer.concat([Buffer.from('FRAME\n'), luma, chroma])
  const header = Buffer.from(`YUV4MPEG2 W${width} H${width} F10:1 Ip A1:1 C420jpeg\n`)
  await writeFile(path, Buffer.concat([header, ...Array.from({ length: frames }, () => frame)]))
  return [
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-video-capture=${path}`,
  ]
}

import type { Hal } from '../../hal/index.js'
import type { ImageHeader } from '../../image/index.js'
import { versionGoesBack } from './version-order.js'

/**
 * Anti-rollback's second rule: a firmware image at the device's floor (one below it fails its
 * check) whose version precedes the running one goes back, which only the owner may confirm.
 * Says why when it does; false otherwise (an image that raises the floor is no downgrade).
 * Neither the floor nor the running version changes within a boot before an install, so what the
 * check finds holds for the install of the image it checked.
 */
export async function downgradeReason(hal: Hal, header: ImageHeader): Promise<string | false> {
  const running = hal.boot.firmware.version
  const floor = await hal.firmwareSlots.floor()
  if (header.floor > floor || !versionGoesBack(header.version, running)) return false
  return (
    `${header.version} goes back from the running ${running} at the anti-rollback level ${floor}: ` +
    'the owner confirms a downgrade with POST install_fw {"allow_downgrade": true}'
  )
}

import { checkImage, type ImageVerdict } from '../../image/index.js'
import type { Hal, StagedImage } from '../../hal/index.js'
import type { UpgradeKind } from '../../machines/index.js'

/** Against the installation's vendor key, this variant, and for firmware the floor as it is now. */
export async function checkStaged(hal: Hal, kind: UpgradeKind, staged: StagedImage): Promise<ImageVerdict> {
  return checkImage(staged, staged.size, {
    vendorKey: hal.vendorKey,
    kind,
    variant: hal.variant,
    ...(kind === 'fw' ? { floor: await hal.firmwareSlots.floor() } : {}),
  })
}

// Upgrades: the versions the device runs, and a panel per image kind to upload, check and
// install a new one (the app's own panel only on P, the variant with an app).
import { deviceRequest } from '../device-session.js'
import { h } from '../dom.js'
import type { View } from '../view.js'
import { imagePanel } from './upgrades/image-panel.js'

interface DeviceVersion {
  hwv: string
  fwv: string
  /** The SHA-256 of the installed app's image (P, once one is installed). */
  uis?: string
}

export const upgradesView: View = {
  path: 'upgrades',
  title: 'Upgrades',
  async show(root, ctx) {
    const versions = h('dl', { id: 'versions' })
    const showVersions = async () => {
      // Public: a token would only add the microSD registers.
      const { hwv, fwv, uis } = (await deviceRequest('/api/system/version')) as DeviceVersion
      // As hemctl tells them apart: only P has a management app, and its routes.
      const isP = hwv.includes('PPA')
      versions.replaceChildren(
        h('dt', {}, 'Hardware'),
        h('dd', {}, hwv),
        h('dt', {}, 'Firmware'),
        h('dd', {}, fwv),
        ...(isP ? [h('dt', {}, 'Management app image (SHA-256)'), h('dd', {}, uis ?? 'none reported')] : []),
      )
      return isP
    }
    const hasApp = await showVersions()
    const hooks = { versionsChanged: async () => void (await showVersions()) }
    root.replaceChildren(
      h('h3', {}, 'Running now'),
      versions,
      h(
        'p',
        { class: 'hint' },
        'Upload an image, check it on the device (signature, integrity, contents, hardware and ' +
          'anti-rollback level), then install it. Installing firmware restarts the device.',
      ),
      imagePanel('fw', ctx, hooks),
    )
    if (hasApp) root.append(imagePanel('ui', ctx, hooks))
  },
}

// Settings: every configuration field (the device's rules shown and checked before sending), the
// passphrase change, the backup, the HTTPS certificate (CSR and import), the authenticators and the factory reset.
import { usableSectors } from '../../protocol/browser.js'
import { h } from '../dom.js'
import type { View } from '../view.js'
import { CONFIG_PATH, CONFIG_SCOPE, configForm, type Config } from './settings/config-form.js'
import { appPreferencesPanel } from './settings/app-preferences-panel.js'
import { authenticatorsPanel } from './settings/authenticators-panel.js'
import { backupPanel } from './settings/backup-panel.js'
import { csrPanel } from './settings/csr-panel.js'
import { fillFixedFields } from './settings/fixed-fields.js'
import { passphraseForm } from './settings/passphrase-form.js'
import { rebootOffer } from './settings/reboot-offer.js'
import { tlsCertificatePanel } from './settings/tls-certificate-panel.js'
import { tlsImportForm } from './settings/tls-import-form.js'
import { wipeoutForm } from './settings/wipeout-form.js'

export const settingsView: View = {
  path: 'settings',
  title: 'Settings',
  async show(root, ctx) {
    const [loaded, status] = await Promise.all([
      ctx.session.get(CONFIG_PATH, CONFIG_SCOPE) as Promise<Config>,
      ctx.status(),
    ])
    let config = loaded
    const hostname = String(config.hostname)
    const fixed = h('dl', { id: 'device-identity' })
    fillFixedFields(fixed, config)
    const reboot = rebootOffer(ctx)
    const saved = (fresh: Config) => {
      config = fresh
      fillFixedFields(fixed, fresh)
    }
    const authenticators = authenticatorsPanel(ctx)
    root.replaceChildren(
      reboot.element,
      h('h3', {}, 'Identity'),
      fixed,
      configForm(ctx, config, usableSectors(status.storage), reboot, saved),
      passphraseForm(ctx),
      backupPanel(ctx),
      h(
        'section',
        { 'aria-labelledby': 'tls-title' },
        h('h3', { id: 'tls-title' }, 'HTTPS certificate'),
        tlsCertificatePanel(ctx, reboot),
        csrPanel(ctx, hostname),
        tlsImportForm(ctx, () => config, reboot),
      ),
      authenticators.element,
      wipeoutForm(ctx, hostname),
      appPreferencesPanel(ctx),
    )
    return authenticators.leave
  },
}

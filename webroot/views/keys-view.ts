// The Keys screen: creating a key first (importing and deriving beside it), then the device's keys
// page by page or as a search finds them, and each key's details, public key, label and deletion.
// Key routes are HTTPS only: over plain HTTP the screen links to the HTTPS address instead.
import { h } from '../dom.js'
import { httpsOrigin } from '../plain-http.js'
import type { View } from '../view.js'
import { showDetails } from './keys/key-details.js'
import { createForm, deriveForm, importForm } from './keys/key-forms.js'
import { keyList } from './keys/key-list.js'
import { explained, runner, type KeysScreen } from './keys/keys-screen.js'
import { newKeyActions } from './keys/new-key-actions.js'

export const keysView: View = {
  path: 'keys',
  title: 'Keys',
  async show(root, ctx) {
    if (!ctx.secure) {
      const https = `${(await httpsOrigin()) ?? `https://${location.hostname}`}${location.pathname}${location.hash}`
      root.replaceChildren(
        h(
          'p',
          { class: 'https-only' },
          'The device manages keys over HTTPS only, so that no key or token crosses the network in clear. ',
          h('a', { href: https }, 'Open this screen over HTTPS'),
          '.',
        ),
      )
      return
    }
    const details = h('section', { class: 'key-open', 'aria-label': 'The open key' })
    const screen: KeysScreen = {
      ctx,
      run: runner(ctx),
      async reload(kid) {
        await list.load(list.offset)
        if (kid && !list.entry(kid)) await list.load('last')
      },
      async added(kid) {
        await list.load(list.offset, kid)
        if (!list.entry(kid)) await list.load('last', kid)
      },
      async open(kid) {
        const entry = list.entry(kid)
        if (entry) await showDetails(screen, entry, details)
      },
      deriveFrom(kid) {
        actions.open(derive.element)
        derive.from(kid)
      },
    }
    const list = keyList(screen)
    const derive = deriveForm(screen)
    const actions = newKeyActions([
      { label: 'Create a key', panel: createForm(screen), primary: true },
      { label: 'Import a public key', panel: importForm(screen) },
      { label: 'Derive a key', panel: derive.element, opened: () => derive.opened() },
    ])
    root.replaceChildren(actions.element, list.element, details)
    try {
      await list.load(0)
    } catch (error) {
      throw await explained(error, ctx)
    }
  },
}

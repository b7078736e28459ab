// The factory reset, behind a typed confirmation: the button stays disabled until the owner has
// typed the device's host name. The device then erases keys, disks and configuration and reboots.
import { field, h } from '../../dom.js'
import { followRestart } from '../../follow-restart.js'
import { refusedOverPlainHttp } from '../../plain-http.js'
import type { AppContext } from '../../view.js'
import { CONFIG_PATH, CONFIG_SCOPE } from './config-form.js'

export const FACTORY_STATE_MESSAGE =
  'The device is back to factory state: it has no owner, keys or configuration. Personalise it to use it again.'

export function wipeoutForm(ctx: AppContext, hostname: string): HTMLFormElement {
  const typed = h('input', { type: 'text', name: 'confirm', autocomplete: 'off', spellcheck: 'false' })
  const button = h('button', { type: 'submit', class: 'danger', disabled: true }, 'Erase the device')
  typed.addEventListener('input', () => (button.disabled = typed.value !== hostname))

  const wipe = async () => {
    if (typed.value !== hostname) return
    // Read before asking: followRestart tells the new boot from the old one by its uptime.
    const before = (await ctx.status()).uptime
    await ctx.session.request(CONFIG_PATH, CONFIG_SCOPE, { body: { wipeout: true } })
    ctx.feedback.progress('The device is erasing itself…')
    const status = await followRestart(ctx.feedback, before)
    if (status.inited !== false) throw new Error('the device came back still personalised')
    ctx.logOut(FACTORY_STATE_MESSAGE)
    return FACTORY_STATE_MESSAGE
  }

  const form = h(
    'form',
    {
      'aria-labelledby': 'wipeout-title',
      onsubmit: (event) => {
        event.preventDefault()
        void ctx.feedback.run('Erasing the device…', wipe)
      },
    },
    h('h3', { id: 'wipeout-title' }, 'Erase the device (wipeout)'),
    h(
      'p',
      {},
      'Erases every key, both disks and the configuration, then reboots the device with no owner. ' +
        'The audit journal stays. This cannot be undone.',
    ),
    field(
      `Type the host name, ${hostname}, to confirm`,
      typed,
      'The button works once the host name is typed exactly.',
    ),
    button,
  )
  return refusedOverPlainHttp(form)
}

// A change that applies only after a reboot (`reboot_required`): said, with a button that reboots
// the device and follows it until it is back.
import { h } from '../../dom.js'
import { followRestart } from '../../follow-restart.js'
import type { AppContext } from '../../view.js'

/** `GET /api/system/reboot` takes `system:config` or `system:upgrade`; the settings screen holds the first. */
const SCOPE = 'system:config'

export interface RebootOffer {
  readonly element: HTMLElement
  /** Shows the offer, `why` saying what waits for the reboot. */
  offer(why: string): void
}

export function rebootOffer(ctx: AppContext): RebootOffer {
  const text = h('p', {})
  const reboot = async () => {
    // Read before asking: followRestart tells the new boot from the old one by its uptime.
    const before = (await ctx.status()).uptime
    await ctx.session.get('/api/system/reboot', SCOPE)
    await followRestart(ctx.feedback, before)
    await ctx.status()
    element.hidden = true
    return 'The device rebooted and is back: the change is in force.'
  }
  const element = h(
    'section',
    { class: 'reboot-offer', 'aria-label': 'Reboot required', hidden: true },
    text,
    h(
      'button',
      { type: 'button', onclick: () => void ctx.feedback.run('Rebooting the device…', reboot) },
      'Reboot now',
    ),
  )
  return {
    element,
    offer(why) {
      text.textContent = `${why} It takes effect after the next reboot.`
      element.hidden = false
    },
  }
}

// Settings → This app: what this browser keeps for the app (localStorage), the idle logout's period. Nothing secret,
// nothing sent to the device.
import { IDLE_CHOICES, idleMinutes, setIdleMinutes, type IdleMinutes } from '../../app-preferences.js'
import { field, h, select } from '../../dom.js'
import type { AppContext } from '../../view.js'

/** The choice is said in the shell's status line. */
export function appPreferencesPanel(ctx: AppContext): HTMLElement {
  const period = select(
    'idle-minutes',
    IDLE_CHOICES.map((minutes) => [String(minutes), `${minutes} minutes`] as const),
    String(idleMinutes()),
  )
  period.addEventListener('change', () => {
    const minutes = Number(period.value) as IdleMinutes
    setIdleMinutes(minutes)
    ctx.feedback.progress(`Kept in this browser: you are logged out after ${minutes} minutes without use.`)
  })
  return h(
    'section',
    { 'aria-labelledby': 'app-preferences-title' },
    h('h3', { id: 'app-preferences-title' }, 'This app'),
    field(
      'Log out after this long without use',
      period,
      'No key press or pointer move for this long ends the session, with a warning a minute before. ' +
        'Kept in this browser only.',
    ),
  )
}

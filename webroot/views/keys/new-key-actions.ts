// The Keys screen's actions: "Create a key" first and prominent, import and derive beside it. Each
// opens its form's panel below them (one at a time) and the same button closes it again.
import { h } from '../../dom.js'

export interface NewKeyAction {
  readonly label: string
  readonly panel: HTMLElement
  readonly primary?: boolean
  /** Called each time the panel opens (a form that lists the device's keys reads them again). */
  readonly opened?: () => void
}

export interface NewKeyActions {
  readonly element: HTMLElement
  /** Opens `panel` (one of the actions') and closes the others. */
  open(panel: HTMLElement): void
}

export function newKeyActions(actions: readonly NewKeyAction[]): NewKeyActions {
  const buttons = actions.map(({ label, panel, primary }) => {
    panel.id ||= `panel-${label.toLowerCase().replace(/\W+/g, '-')}`
    return h(
      'button',
      {
        type: 'button',
        class: primary ? 'primary' : undefined,
        'aria-expanded': 'false',
        'aria-controls': panel.id,
        onclick: () => (panel.hidden ? open(panel) : show(undefined)),
      },
      label,
    )
  })
  const show = (chosen: HTMLElement | undefined) =>
    actions.forEach(({ panel }, i) => {
      panel.hidden = panel !== chosen
      buttons[i]!.setAttribute('aria-expanded', String(panel === chosen))
    })
  const open = (panel: HTMLElement) => {
    show(panel)
    actions.find((action) => action.panel === panel)?.opened?.()
    panel.querySelector<HTMLElement>('input, select, textarea')?.focus()
  }
  return {
    element: h(
      'div',
      { class: 'key-actions' },
      h('div', { class: 'buttons' }, ...buttons),
      ...actions.map(({ panel }) => panel),
    ),
    open,
  }
}

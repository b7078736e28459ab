// One operation of the "Use this key" section: a collapsed form, its fields checked in the page,
// run under the key's own scope, and what it gave shown below it.
import { h } from '../../../dom.js'
import type { KeyEntry } from '../../../../client/browser.js'
import type { KeysScreen } from '../keys-screen.js'
import type { KeyFacts } from './key-uses.js'

/** What every operation's form knows: the screen, the key, and the device's other keys (for a peer). */
export interface UseContext {
  readonly screen: KeysScreen
  readonly key: KeyFacts
  /** The device's keys, listed once, when a picker first needs them. */
  keys(): Promise<KeyEntry[]>
}

export interface Outcome {
  /** The status line's words when it ends. */
  said: string
  /** The outputs, or the verdict. */
  shown: HTMLElement[]
}

export interface OpSpec {
  title: string
  submit: string
  /** The status line's words meanwhile. */
  doing: string
  rows: HTMLElement[]
  run(): Promise<Outcome>
}

export function opSection(use: UseContext, spec: OpSpec): HTMLDetailsElement {
  const result = h('div', { class: 'op-result' })
  const form = h(
    'form',
    {
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        result.replaceChildren()
        void use.screen.run(spec.doing, async () => {
          const outcome = await spec.run()
          result.replaceChildren(...outcome.shown)
          return outcome.said
        })
      },
    },
    ...spec.rows,
    h('button', { type: 'submit' }, spec.submit),
  )
  return h('details', { class: 'key-form key-use' }, h('summary', {}, spec.title), form, result)
}

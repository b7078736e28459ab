// A transfer's progress (an upload, a download): a bar, and the bytes moved in words beside it.
import { h, uid } from './dom.js'

export interface TransferProgress {
  readonly element: HTMLElement
  /** `moved` of `total` bytes. */
  show(moved: number, total: number): void
  /** Back to nothing moved. */
  reset(): void
}

/** `label` names the bar ("Firmware upload progress"). */
export function transferProgress(label: string): TransferProgress {
  const bar = h('progress', { id: uid('progress'), max: 1, value: 0 })
  const words = h('span', { class: 'progress-text' }, 'Nothing moved yet.')
  return {
    element: h('div', { class: 'field' }, h('label', { for: bar.id }, label), bar, words),
    show(moved, total) {
      bar.max = Math.max(total, 1)
      bar.value = moved
      words.textContent = `${moved} of ${total} bytes (${Math.floor((moved * 100) / Math.max(total, 1))} %)`
    },
    reset() {
      bar.value = 0
      words.textContent = 'Nothing moved yet.'
    },
  }
}

// An upload's progress: a bar, and the bytes sent in words beside it.
import { h, uid } from '../../dom.js'

export interface UploadProgress {
  readonly element: HTMLElement
  /** `sent` of `total` bytes. */
  show(sent: number, total: number): void
  /** Back to nothing sent. */
  reset(): void
}

export function uploadProgress(title: string): UploadProgress {
  const bar = h('progress', { id: uid('progress'), max: 1, value: 0 })
  const words = h('span', { class: 'progress-text' }, 'Nothing sent yet.')
  return {
    element: h('div', { class: 'field' }, h('label', { for: bar.id }, `${title} upload progress`), bar, words),
    show(sent, total) {
      bar.max = Math.max(total, 1)
      bar.value = sent
      words.textContent = `${sent} of ${total} bytes (${Math.floor((sent * 100) / Math.max(total, 1))} %)`
    },
    reset() {
      bar.value = 0
      words.textContent = 'Nothing sent yet.'
    },
  }
}

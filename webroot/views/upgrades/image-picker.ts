// The image's file field: what a picked file claims, told next to it, or why it is no image of the
// panel's kind, marked on the field (field-error.ts, as every form's rules are) before anything is sent.
import { field, h, uid } from '../../dom.js'
import { InputError } from '../../feedback.js'
import { setFieldError } from '../../field-error.js'
import {
  describeClaims,
  KIND_NAMES,
  MAX_IMAGE_BYTES,
  readImageClaims,
  type ImageClaims,
  type ImageKind,
} from './image-file.js'

export interface PickedImage {
  file: File
  claims: ImageClaims
}

export interface ImagePicker {
  readonly element: HTMLElement
  /** The picked file and its claims, told next to the field; an InputError, shown there too, when it is none. */
  picked(): Promise<PickedImage>
}

/** The names of the panel's kind; `made` says how an image of it is made. */
export interface KindNames {
  title: string
  word: string
  made: string
}

/** `onPick` runs when another file is picked. */
export function imagePicker(kind: ImageKind, { title, word, made }: KindNames, onPick: () => void): ImagePicker {
  const input = h('input', { type: 'file', accept: '.bin,.img,.tar,application/octet-stream' })
  const element = field(
    `${title} image`,
    input,
    `A signed ${KIND_NAMES[kind]} image (${made}), at most 16 MiB (${MAX_IMAGE_BYTES} bytes).`,
  )
  // What the picked file claims, among what describes the field; emptied when it is refused.
  const claimed = h('p', { id: uid('claimed'), class: 'hint' })
  input.setAttribute('aria-describedby', `${input.getAttribute('aria-describedby')} ${claimed.id}`)
  element.append(claimed)

  const picked = async (): Promise<PickedImage> => {
    const file = input.files?.[0]
    try {
      if (!file) throw new InputError(`Pick a ${word} image file first.`)
      const claims = await readImageClaims(file, kind)
      setFieldError(input, undefined)
      const what = `${file.name}, ${file.size} bytes, claims ${describeClaims(claims)}`
      claimed.textContent = `${what}; the device's check verifies it.`
      return { file, claims }
    } catch (error) {
      claimed.textContent = ''
      setFieldError(input, error instanceof Error ? error.message : String(error))
      throw error
    }
  }
  input.addEventListener('change', () => {
    onPick()
    void picked().catch(() => undefined)
  })
  return { element, picked }
}

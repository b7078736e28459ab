// What an operation gave: each value in base64 (and as text where it reads as text), with a copy
// button and a download of its bytes.
import { copyButton } from '../../../copy-button.js'
import { h, saveFile } from '../../../dom.js'
import { toBase64 } from '../../../../client/browser.js'
import { inSentence } from './data-field.js'

export interface Output {
  /** What it is, as a heading: "Ciphertext". */
  name: string
  bytes: Uint8Array
  /** The download's file name. */
  file: string
  /** Shown as text as well when it decodes as UTF-8 (a decrypted message). */
  text?: boolean
}

const CONTROL_CHARACTERS = /[\p{Cc}]/u
const LINE_BREAKS = /[\n\r\t]/g

/** The bytes as text when they are UTF-8 without control characters (line breaks and tabs aside). */
function asText(bytes: Uint8Array): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return CONTROL_CHARACTERS.test(text.replace(LINE_BREAKS, '')) ? undefined : text
  } catch {
    return undefined
  }
}

export function outputView({ name, bytes, file, text }: Output): HTMLElement {
  const lower = inSentence(name)
  const encoded = toBase64(bytes)
  const readable = text ? asText(bytes) : undefined
  return h(
    'div',
    { class: 'op-output' },
    h('h5', {}, `${name} (${bytes.length} bytes)`),
    ...(readable !== undefined
      ? [h('p', { class: 'label' }, 'As text:'), h('pre', { class: 'blob op-text' }, readable)]
      : []),
    h('p', { class: 'label' }, 'Base64:'),
    h('code', { class: 'blob' }, encoded),
    h(
      'div',
      { class: 'buttons' },
      ...(readable !== undefined ? [copyButton(`Copy the ${lower} as text`, () => readable)] : []),
      copyButton(`Copy the ${lower} (base64)`, () => encoded),
      h('button', { type: 'button', onclick: () => saveFile(file, bytes) }, `Download the ${lower}`),
    ),
  )
}

/** A verify's or check's answer in words: the device's 406 is a result, not a failure. */
export function verdictView(good: boolean, words: string): HTMLElement {
  return h('p', { class: `op-verdict ${good ? 'good' : 'bad'}` }, words)
}

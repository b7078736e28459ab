// The peer of an agreement (encrypt, HMAC, wrap or ECDH with an X25519/X448/SECP key): a stored key
// of the same curve, chosen or given by KID, or a public key pasted; exactly one of them.
import { field, h } from '../../../dom.js'
import { dataField, type DataField } from './data-field.js'
import { setFieldError } from '../../../field-error.js'
import { InputError } from '../../../feedback.js'
import { kidPicker } from '../kid-picker.js'
import { kidProblem } from '../key-text.js'
import { importLengths, isPublicKeyType, readPublicKey } from '../public-key-pem.js'
import { isPeerOf, keyFacts } from './key-uses.js'
import type { UseContext } from './op-section.js'

export interface PeerField {
  readonly rows: HTMLElement[]
  /** `{ext_kid}` or `{pubkey}` as the client's calls take them; throws (fields marked) when neither or both. */
  read(): { extKid?: string; pubkey?: Uint8Array }
}

export function peerField(use: UseContext): PeerField {
  const { key } = use
  const area = h('textarea', { name: 'pubkey', rows: 3, spellcheck: 'false', autocomplete: 'off' })
  const lengths = isPublicKeyType(key.type) ? importLengths(key.type) : []
  const picker = kidPicker({
    label: 'Peer key (KID)',
    hint: `A stored ${key.type} key that can do ECDH (an imported public key will do). Or paste its public key below.`,
    keys: use.keys,
    fits: (entry) => {
      const other = keyFacts(entry)
      return other !== undefined && isPeerOf(key, other)
    },
    problem: (text) => (text.trim() === '' ? undefined : kidProblem(text)),
  })
  void picker.refresh().catch(() => undefined)
  const keyRow = field(
    'Or the peer’s public key',
    area,
    `PEM, or the raw key in base64 (${lengths.join(' or ')} bytes for ${key.type}).`,
  )
  function pastedKey(): { bytes?: Uint8Array; problem?: string } {
    if (area.value.trim() === '') return {}
    try {
      const { type, bytes } = readPublicKey(area.value)
      if (type && type !== key.type)
        return { problem: `The peer’s public key is a ${type} key; ${key.type} is needed.` }
      if (!lengths.includes(bytes.length))
        return {
          problem: `The peer’s public key has ${bytes.length} bytes; ${key.type} takes ${lengths.join(' or ')}.`,
        }
      return { bytes }
    } catch (error) {
      return { problem: (error as Error).message }
    }
  }
  return {
    rows: [h('fieldset', { class: 'peer' }, h('legend', {}, 'The peer'), picker.row, keyRow)],
    read() {
      const kidWrong = picker.check()
      const pasted = pastedKey()
      setFieldError(area, pasted.problem)
      const both = picker.value() !== '' && pasted.bytes !== undefined
      const none = picker.control.value.trim() === '' && area.value.trim() === ''
      const problem =
        kidWrong ??
        pasted.problem ??
        (both ? 'Give the peer once: its KID or its public key, not both.' : undefined) ??
        (none ? 'The peer is needed: a stored key’s KID or its public key.' : undefined)
      if (problem) {
        if (both || none) setFieldError(picker.control, problem)
        ;(kidWrong || both || none ? picker.control : area).focus()
        throw new InputError(`Not sent: ${problem}`)
      }
      return pasted.bytes ? { pubkey: pasted.bytes } : { extKid: picker.value() }
    },
  }
}

/** The optional context an agreement mixes into the key it makes (HKDF info); the reverse needs the same. */
export function agreementContext(made: string, max: number, reverse: string): DataField {
  return dataField({
    name: 'Context',
    hint: `Optional: mixed into the ${made} the agreement makes; at most ${max} bytes. ${reverse} needs the same.`,
    format: 'text',
    min: 0,
    max,
    optional: true,
  })
}

// Bytes the owner gives an operation: typed as text (UTF-8) or base64, or a file read in the page.
// Each field knows the device's bounds for it and says, next to itself, why it cannot be sent.
import { field, h, select } from '../../../dom.js'
import { setFieldError } from '../../../field-error.js'
import { InputError } from '../../../feedback.js'
import { fromBase64, LIMITS, toBase64 } from '../../../../client/browser.js'

export type DataFormat = 'text' | 'base64' | 'file'

const FORMAT_NAMES: Record<DataFormat, string> = {
  text: 'Text (UTF-8)',
  base64: 'Base64',
  file: 'A file',
}

/** Read at every check: a form may change them with an option (ECB takes whole blocks, CBC does not). */
export interface DataRules {
  /** The field's name, as its label shows it ("Message"). */
  name: string
  hint: string
  /** The format offered first: text for messages, base64 for what a device or tool made. */
  format: DataFormat
  /** Bounds in bytes; an empty optional field is no bytes at all (undefined). */
  min: number
  max: number
  optional?: boolean
  /** RFC 3394 and ECB take whole blocks. */
  multipleOf?: number
  /** The only lengths that fit (an IV, a tag, a KEM ciphertext). */
  exactly?: readonly number[]
}

/** The message of an operation: 1 to 2048 bytes, typed as text first; `more` adds to the hint. */
export function messageRules(more = ''): DataRules {
  return { name: 'Message', hint: `1 to ${LIMITS.msg} bytes.${more}`, format: 'text', min: 1, max: LIMITS.msg }
}

export interface DataField {
  readonly row: HTMLElement
  /** The control marked when the bytes do not fit (the text box or the file chooser). */
  readonly control: HTMLElement
  /** Shown or hidden with the options that need it (an AAD only with GCM). */
  show(shown: boolean): void
  readonly shown: boolean
  /** Fills the field with bytes in base64 (an earlier output). */
  fill(bytes: Uint8Array): void
  /** The bytes, or why they cannot be sent (and the field marked); undefined for an empty optional field. */
  read(): Promise<{ bytes?: Uint8Array; problem?: string }>
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Base64 as the device takes it (standard alphabet, padded); whitespace, as a paste brings it, is dropped. */
export function base64Bytes(text: string): Uint8Array | undefined {
  const compact = text.replace(/\s+/g, '')
  if (!B64.test(compact) || compact.length % 4 !== 0) return undefined
  try {
    return fromBase64(compact)
  } catch {
    return undefined
  }
}

/** A field's name inside a sentence: "the message", but "the MAC", "the IV". */
export const inSentence = (name: string) =>
  /^[A-Z]{2}/.test(name) ? name : name.charAt(0).toLowerCase() + name.slice(1)

const plural = (n: number) => `${n} byte${n === 1 ? '' : 's'}`

/** Why `length` bytes do not fit `rules`, or undefined. */
function sizeProblem(what: string, length: number, rules: DataRules): string | undefined {
  const { exactly, min, max, multipleOf } = rules
  if (exactly && !exactly.includes(length))
    return `${what} has ${plural(length)}; it must have ${exactly.join(' or ')} bytes.`
  if (length > max) return `${what} has ${plural(length)}; the device takes at most ${plural(max)} here.`
  if (length < min) return `${what} has ${plural(length)}; the device needs at least ${plural(min)}.`
  if (multipleOf && length % multipleOf !== 0)
    return `${what} has ${plural(length)}; it must be a whole number of ${multipleOf}-byte blocks.`
  return undefined
}

export function dataField(rules: DataRules): DataField {
  const { name } = rules
  const formats = select(
    'format',
    (Object.keys(FORMAT_NAMES) as DataFormat[]).map((f) => [f, FORMAT_NAMES[f]] as const),
    rules.format,
  )
  const text = h('textarea', { rows: 3, spellcheck: 'false', autocomplete: 'off' })
  const file = h('input', { type: 'file' })
  const textRow = field(name, text, rules.hint)
  const fileRow = field(`${name} file`, file, `Read in this page; at most ${plural(rules.max)}.`)
  const row = h(
    'fieldset',
    { class: 'data-field' },
    h('legend', {}, name),
    field(`${name} given as`, formats),
    textRow,
    fileRow,
  )
  const format = () => formats.value as DataFormat
  const control = () => (format() === 'file' ? file : text)
  const sync = () => {
    textRow.hidden = format() === 'file'
    fileRow.hidden = format() !== 'file'
    setFieldError(text, undefined)
    setFieldError(file, undefined)
  }
  formats.addEventListener('change', sync)
  sync()
  // A file too large is said at once, before anything is read.
  file.addEventListener('change', () => {
    const chosen = file.files?.[0]
    setFieldError(file, chosen && sizeProblem('The file', chosen.size, { ...rules, exactly: undefined, min: 0 }))
  })
  text.addEventListener('input', () => text.hasAttribute('aria-invalid') && setFieldError(text, undefined))

  async function bytesOf(): Promise<{ bytes?: Uint8Array; problem?: string }> {
    if (format() === 'file') {
      const chosen = file.files?.[0]
      if (!chosen) return rules.optional ? {} : { problem: `Choose the ${inSentence(name)} file.` }
      const problem = sizeProblem('The file', chosen.size, rules)
      return problem ? { problem } : { bytes: new Uint8Array(await chosen.arrayBuffer()) }
    }
    if (text.value === '') return rules.optional ? {} : { problem: `The ${inSentence(name)} is needed.` }
    if (format() === 'text') return { bytes: new TextEncoder().encode(text.value) }
    const bytes = base64Bytes(text.value)
    return bytes
      ? { bytes }
      : { problem: `The ${inSentence(name)} is not base64 (A–Z, a–z, 0–9, + and /, padded with =).` }
  }

  return {
    row,
    get control() {
      return control()
    },
    show(shown) {
      row.hidden = !shown
    },
    get shown() {
      return !row.hidden
    },
    fill(bytes) {
      formats.value = 'base64'
      sync()
      text.value = toBase64(bytes)
    },
    async read() {
      const got = await bytesOf()
      const problem =
        got.problem ?? (got.bytes ? sizeProblem(`The ${inSentence(name)}`, got.bytes.length, rules) : undefined)
      setFieldError(control(), problem)
      return problem ? { problem } : got
    },
  }
}

/**
 * Reads every shown field: the first that cannot be sent gets the focus and nothing is sent. Hidden
 * fields (an option that does not take them) give nothing.
 */
export async function readAll<K extends string>(
  fields: Partial<Record<K, DataField>>,
): Promise<Partial<Record<K, Uint8Array>>> {
  const entries = (Object.entries(fields) as [K, DataField | undefined][]).filter(
    (entry): entry is [K, DataField] => entry[1] !== undefined,
  )
  const read = await Promise.all(entries.map(async ([key, f]) => [key, f, f.shown ? await f.read() : {}] as const))
  const broken = read.filter(([, , got]) => got.problem !== undefined)
  if (broken.length > 0) {
    broken[0]![1].control.focus()
    throw new InputError(`Not sent: ${broken.map(([, , got]) => got.problem).join(' ')}`)
  }
  const given = read.filter(([, , got]) => got.bytes !== undefined).map(([key, , got]) => [key, got.bytes])
  return Object.fromEntries(given) as Partial<Record<K, Uint8Array>>
}

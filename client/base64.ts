import { UnexpectedAnswerError } from './errors.js'
import { fromBase64 } from '../protocol/browser.js'

export { fromBase64, toBase64, toBase64Url } from '../protocol/browser.js'

/** A base64 field of a success answer (standard, padded); one that is not base64 is no answer of the API. */
export function base64Field(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0)
    throw new UnexpectedAnswerError('the device sent a field that is not base64')
  return fromBase64(text)
}

// The JSON wire of the device API: bytes travel as base64 fields, answers come back as JSON.
import { UnexpectedAnswerError } from './errors.js'

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

/** An answer's body: JSON, else its text (an error page), else undefined when empty. */
export function parseAnswer(body: Buffer): unknown {
  if (body.length === 0) return undefined
  const text = body.toString('utf8')
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

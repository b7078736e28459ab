import type { CommandReply } from '../protocol/index.js'
import { EncodedJson } from './encoded-json.js'
import type { HttpError } from './errors.js'

export const JSON_TYPE = 'application/json'

/** The bytes of a reply's body as they go out: JSON unless the reply says otherwise; '' for none. */
export function replyBody(reply: CommandReply): string | Uint8Array {
  const { body, contentType = JSON_TYPE } = reply
  if (body === undefined) return ''
  if (body instanceof EncodedJson) return body.text
  if (contentType !== JSON_TYPE && (typeof body === 'string' || body instanceof Uint8Array)) return body
  return JSON.stringify(body)
}

/** The API's error body: `{"error": "<snake_case_code>", "message": "<human text>"}`. */
export function errorReply(error: HttpError): CommandReply {
  return { status: error.status, body: { error: error.code, message: error.message } }
}

// A device's refusal in words for the owner: the device's own (the `message` of its JSON error), or
// the page's where it knows more than the device says (a login refused, the fail state).
import { refusal, type DeviceRefusedError } from '../client/browser.js'

/** The device's own words, or its bare status when its answer had none. */
export function refusalWords(error: DeviceRefusedError): string {
  const message = (error.body as { message?: unknown } | undefined)?.message
  return typeof message === 'string' ? message : `The device answered ${error.status}`
}

/** The same refusal (its class, status and `error` code) told in `words`. */
export function reworded(error: DeviceRefusedError, words: string): DeviceRefusedError {
  const body = typeof error.body === 'object' && error.body !== null ? error.body : {}
  return refusal(error.status, { ...body, message: words }, error.what)
}

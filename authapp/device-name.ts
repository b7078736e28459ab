// How the page names a device and shows any text that came over the network.
import { printable } from '../client/browser.js'

/** A text from the invitation, the broker or the store, safe to show; undefined when there is none. */
export function shownText(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : printable(text)
}

/** The device's host name, else its user's name, as the invitation gave them. */
export function deviceName(device: { hostname?: string; user?: string }): string {
  return shownText(device.hostname) ?? shownText(device.user) ?? 'the device'
}

// A page loaded over plain HTTP from another host sends nothing derived from a passphrase: anyone on the path
// could replay a login's proof or watch the device being set up. Loopback is the owner's own machine.
import { h } from './dom.js'
import { appConfig } from './app-config.js'

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/

/**
 * Undefined over HTTPS, or over plain HTTP from loopback; else a paragraph that says why the page refuses,
 * with a link to the same page at the device's HTTPS origin (its port from `/app-config.json`).
 */
export async function plainHttpRefusal(): Promise<HTMLElement | undefined> {
  if (location.protocol === 'https:' || LOOPBACK.test(location.hostname)) return undefined
  const reason =
    'This page came over plain HTTP, so anyone on the network between you and the device could read or change ' +
    'what it sends. It sends nothing secret this way. '
  const port = (await appConfig().catch(() => undefined))?.httpsPort
  if (port === undefined)
    return h('p', { class: 'banner plain-http' }, reason, 'This device serves no HTTPS: start it with HTTPS on.')
  const origin = `https://${location.hostname}${port === 443 ? '' : `:${port}`}`
  return h(
    'p',
    { class: 'banner plain-http' },
    reason,
    h('a', { href: `${origin}${location.pathname}${location.hash}` }, `Open it over HTTPS (${origin})`),
    '.',
  )
}

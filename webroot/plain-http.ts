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
  const origin = await httpsOrigin()
  if (origin === undefined)
    return h('p', { class: 'banner plain-http' }, reason, 'This device serves no HTTPS: start it with HTTPS on.')
  return h(
    'p',
    { class: 'banner plain-http' },
    reason,
    h('a', { href: `${origin}${location.pathname}${location.hash}` }, `Open it over HTTPS (${origin})`),
    '.',
  )
}

/** This device's HTTPS origin at the page's host name (its port from `/app-config.json`); undefined without one. */
export async function httpsOrigin(): Promise<string | undefined> {
  const port = (await appConfig().catch(() => undefined))?.httpsPort
  return port === undefined ? undefined : `https://${location.hostname}${port === 443 ? '' : `:${port}`}`
}

/**
 * `form` as it is, or, when the page refuses (`plainHttpRefusal`), with everything but its heading replaced by the
 * refusal: nothing to type a secret into, nothing to send.
 */
export function refusedOverPlainHttp<F extends HTMLElement>(form: F): F {
  void plainHttpRefusal().then((refusal) => {
    if (refusal) form.replaceChildren(...Array.from(form.querySelectorAll(':scope > h3')), refusal)
  })
  return form
}

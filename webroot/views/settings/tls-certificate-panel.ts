// Settings → the TLS certificate in use: what the HTTPS port serves now (GET /api/system/tls), its subject, issuer,
// validity and SHA-256 fingerprint, read in the page. An imported certificate is served from the reboot that
// activates it: the panel reads again once the reboot offer has followed that reboot.
import { copyButton } from '../../copy-button.js'
import { h } from '../../dom.js'
import { servedCertificate } from '../../served-certificate.js'
import type { AppContext } from '../../view.js'
import type { RebootOffer } from './reboot-offer.js'

const DAY_MS = 86_400_000

/** "expired 3 days ago", "expires today", "expires in 12 days", from `now`. */
export function expiryWords(notAfter: Date, now: number): string {
  const days = Math.floor((notAfter.getTime() - now) / DAY_MS)
  if (notAfter.getTime() < now) return `expired ${-days} day${-days === 1 ? '' : 's'} ago`
  if (days === 0) return 'expires today'
  return `expires in ${days} day${days === 1 ? '' : 's'}`
}

const day = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`

async function certificateFacts(): Promise<HTMLElement> {
  // X.509 parsing is needed here alone in the app's daily use: loaded on the panel's first read.
  const [{ readCertificate }, served] = await Promise.all([import('../../../hal/browser.js'), servedCertificate()])
  const leaf = readCertificate(served.chain[0]!)
  const selfSigned =
    leaf.issuer.der.length === leaf.subject.der.length &&
    leaf.issuer.der.every((byte, i) => byte === leaf.subject.der[i])
  const expired = leaf.notAfter.getTime() < Date.now()
  const more = served.chain.length - 1
  return h(
    'dl',
    { id: 'tls-in-use' },
    h('dt', {}, 'Subject'),
    h('dd', {}, leaf.subject.text || '(none)'),
    h('dt', {}, 'Issuer'),
    h(
      'dd',
      {},
      leaf.issuer.text || '(none)',
      selfSigned ? " (self-signed: browsers warn until the owner accepts it, or a CA's certificate is imported)" : '',
      more > 0 ? `; ${more} more certificate${more === 1 ? '' : 's'} in the chain` : '',
    ),
    h('dt', {}, 'Valid'),
    h(
      'dd',
      { class: expired ? 'expired' : undefined },
      `from ${day(leaf.notBefore)} to ${day(leaf.notAfter)}: ${expiryWords(leaf.notAfter, Date.now())}`,
    ),
    h('dt', {}, 'SHA-256 fingerprint'),
    h(
      'dd',
      {},
      h('span', { class: 'fingerprint' }, served.fingerprint),
      ' ',
      copyButton('Copy the fingerprint', () => served.fingerprint),
    ),
  )
}

/** The panel; `reboot` is the screen's offer, whose end (a reboot followed) may have changed the certificate. */
export function tlsCertificatePanel(ctx: AppContext, reboot: RebootOffer): HTMLElement {
  const facts = h('div', { 'aria-live': 'polite' })
  const read = async () => {
    facts.setAttribute('aria-busy', 'true')
    try {
      facts.replaceChildren(await certificateFacts())
    } catch (error) {
      facts.replaceChildren(h('p', { class: 'hint' }, 'The certificate in use could not be read.'))
      ctx.feedback.fail(error)
    } finally {
      facts.removeAttribute('aria-busy')
    }
  }
  // The offer hides itself once the device it rebooted is back.
  new MutationObserver(() => {
    if (reboot.element.hidden) void read()
  }).observe(reboot.element, { attributes: true, attributeFilter: ['hidden'] })
  void read()
  return h(
    'section',
    { 'aria-labelledby': 'tls-in-use-title' },
    h('h4', { id: 'tls-in-use-title' }, 'Certificate in use'),
    h(
      'p',
      { class: 'hint' },
      "What the HTTPS port serves now. Compare the fingerprint with the one your browser shows for this page's " +
        'certificate (the padlock). An imported certificate is served from the next reboot.',
    ),
    facts,
  )
}

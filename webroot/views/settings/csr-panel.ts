// `gen_csr`: the device makes a certificate signing request for its own TLS key, which a CA signs;
// the chain then comes back through the import form without any key.
import { fromBase64 } from '../../../client/browser.js'
import { field, h, saveFile } from '../../dom.js'
import type { AppContext } from '../../view.js'
import { CONFIG_PATH, CONFIG_SCOPE } from './config-form.js'
import { toPem } from '../../../hal/browser.js'

export function csrPanel(ctx: AppContext, hostname: string): HTMLElement {
  const shown = h('textarea', { readonly: true, rows: 8, spellcheck: 'false', class: 'pem' })
  const download = h('button', { type: 'button' }, 'Download the CSR')
  const result = h('div', { hidden: true }, field('Certificate signing request (PEM)', shown), download)
  let pem = ''
  download.addEventListener('click', () => saveFile(`${hostname}.csr.pem`, pem, 'application/pkcs10'))

  const make = async () => {
    const answer = (await ctx.session.request(CONFIG_PATH, CONFIG_SCOPE, { body: { gen_csr: true } })) as {
      csr?: string
    }
    if (typeof answer.csr !== 'string') throw new Error('the device answered without a CSR')
    pem = toPem('CERTIFICATE REQUEST', fromBase64(answer.csr))
    shown.value = pem
    result.hidden = false
    return `The CSR for ${hostname} is ready: have it signed by your CA, then import the chain below without a key.`
  }
  return h(
    'section',
    { 'aria-labelledby': 'csr-title' },
    h('h4', { id: 'csr-title' }, 'Certificate signing request'),
    h(
      'p',
      { class: 'hint' },
      `The device makes a CSR for its own TLS key, named ${hostname}; the key never leaves the device.`,
    ),
    h(
      'button',
      { type: 'button', onclick: () => void ctx.feedback.run('Asking the device for a CSR…', make) },
      'Make a CSR',
    ),
    result,
  )
}

// `tls`: a certificate chain for the HTTPS port, with the private key it certifies wrapped here
// for the device, or without a key when the chain certifies the device's own key (from the CSR).
import { DeviceRefusedError, fromBase64, toBase64, wrapTlsKeyWebCrypto } from '../../../client/browser.js'
import { field, h } from '../../dom.js'
import type { AppContext } from '../../view.js'
import { CONFIG_PATH, CONFIG_SCOPE, type Config } from './config-form.js'
import { refuseIfInvalid, setFieldError } from '../../field-error.js'
import { fromPem } from '../../../hal/browser.js'
import { reworded } from '../../refusal-words.js'
import type { RebootOffer } from './reboot-offer.js'
import { TLS_IMPORT_WORDS, tlsRefusalWords } from './tls-import-words.js'

/** JSON bodies above this many bytes are refused (docs/api.md "Rules on every path"). */
const BODY_LIMIT = 7300
const DER_SEQUENCE = 0x30

async function fileBytes(input: HTMLInputElement): Promise<Uint8Array | undefined> {
  const file = input.files?.[0]
  return file ? new Uint8Array(await file.arrayBuffer()) : undefined
}

/** The chain's DER certificates, leaf first, concatenated; or why the file holds none. */
function chainDer(bytes: Uint8Array): Uint8Array | string {
  if (bytes[0] === DER_SEQUENCE) return bytes
  const blocks = fromPem(new TextDecoder().decode(bytes), 'CERTIFICATE')
  if (blocks.length === 0) return TLS_IMPORT_WORDS.chainNotCertificate
  return Uint8Array.from(blocks.flatMap((block) => [...block]))
}

function keyDer(bytes: Uint8Array): Uint8Array | string {
  if (bytes[0] === DER_SEQUENCE) return bytes
  const blocks = fromPem(new TextDecoder().decode(bytes), 'PRIVATE KEY')
  return blocks.length === 1 ? blocks[0]! : TLS_IMPORT_WORDS.keyNotPkcs8
}

export function tlsImportForm(ctx: AppContext, config: () => Config, reboot: RebootOffer): HTMLFormElement {
  const chain = h('input', { type: 'file', name: 'chain', accept: '.pem,.crt,.cer,.der' })
  const key = h('input', { type: 'file', name: 'key', accept: '.pem,.key,.der' })

  const send = async () => {
    const [chainBytes, keyBytes] = await Promise.all([fileBytes(chain), fileBytes(key)])
    const crt = chainBytes ? chainDer(chainBytes) : TLS_IMPORT_WORDS.noChain
    const pkcs8 = keyBytes && keyDer(keyBytes)
    setFieldError(chain, typeof crt === 'string' ? crt : undefined)
    setFieldError(key, typeof pkcs8 === 'string' ? pkcs8 : undefined)
    refuseIfInvalid(form)
    const eid = fromBase64(String(config().eid))
    const tls = {
      crt: toBase64(crt as Uint8Array),
      ...(pkcs8 ? await wrapTlsKeyWebCrypto(pkcs8 as Uint8Array, eid) : {}),
    }
    // Only the wrapped key goes on; the plain one is not kept.
    if (pkcs8) (pkcs8 as Uint8Array).fill(0)
    const size = new TextEncoder().encode(JSON.stringify({ tls })).length
    if (size > BODY_LIMIT) {
      setFieldError(chain, TLS_IMPORT_WORDS.tooLarge(size, BODY_LIMIT))
      refuseIfInvalid(form)
    }
    const answer = (await ctx.session.request(CONFIG_PATH, CONFIG_SCOPE, { body: { tls } }).catch((error) => {
      throw refusedInWords(error, pkcs8 !== undefined)
    })) as { reboot_required?: boolean }
    form.reset()
    if (answer.reboot_required) reboot.offer('The device accepted the certificate.')
    return 'The certificate is accepted; the HTTPS port serves it after the next reboot.'
  }

  /** The device's refusal told in the owner's words, beside the file it is about too. */
  const refusedInWords = (error: unknown, withKey: boolean): unknown => {
    if (!(error instanceof DeviceRefusedError)) return error
    const told = tlsRefusalWords(error, withKey)
    if (!told) return error
    setFieldError(told.file === 'chain' ? chain : key, told.words)
    return reworded(error, told.words)
  }

  const form = h(
    'form',
    {
      'aria-labelledby': 'tls-import-title',
      onsubmit: (event) => {
        event.preventDefault()
        void ctx.feedback.run('Sending the certificate…', send)
      },
    },
    h('h4', { id: 'tls-import-title' }, 'Import a certificate'),
    field(
      'Certificate chain',
      chain,
      'PEM or DER, the leaf first, then the intermediates. ' +
        `Chain and key together must fit in one request of ${BODY_LIMIT} bytes.`,
    ),
    field(
      'Private key (optional)',
      key,
      'The key the leaf certifies, unencrypted PKCS#8 (-----BEGIN PRIVATE KEY-----). It is encrypted here for ' +
        "this device before it is sent. Leave it empty when the chain certifies the device's own key (the CSR's).",
    ),
    h('button', { type: 'submit' }, 'Import the certificate'),
  )
  return form
}

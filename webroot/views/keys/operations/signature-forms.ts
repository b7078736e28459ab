// Sign and verify: ECDSA (a SECP key with the ExDSA flag; the device hashes, the signature is DER),
// EdDSA (RFC 8032, with a context where the scheme takes one) and ML-DSA (FIPS 204, a context).
import { field, select } from '../../../dom.js'
import { cryptoCalls, LIMITS, type SignAlg } from '../../../../client/browser.js'
import { keyTypes, type KeyType } from '../../../../protocol/browser.js'
import { dataField, messageRules, readAll, type DataRules } from './data-field.js'
import { outputView, verdictView } from './op-output.js'
import { opSection, type UseContext } from './op-section.js'

/** The schemes of a key type, its usual one first; ML-DSA has one, named by the key. */
function schemesOf(type: KeyType): readonly (readonly [SignAlg, string])[] {
  switch (type) {
    case 'ED25519':
      return [
        ['Ed25519', 'Ed25519 (pure, no context)'],
        ['Ed25519ctx', 'Ed25519ctx (a context is needed)'],
        ['Ed25519ph', 'Ed25519ph (SHA-512 prehash, optional context)'],
      ]
    case 'ED448':
      return [
        ['Ed448', 'Ed448 (optional context)'],
        ['Ed448ph', 'Ed448ph (SHAKE256 prehash, optional context)'],
      ]
    case 'SECP384R1':
      return [['SHA384WithECDSA', 'ECDSA with SHA-384'], ...ecdsa.filter(([alg]) => alg !== 'SHA384WithECDSA')]
    case 'SECP521R1':
      return [['SHA512WithECDSA', 'ECDSA with SHA-512'], ...ecdsa.filter(([alg]) => alg !== 'SHA512WithECDSA')]
    default:
      return keyTypes[type].kind === 'ec' ? ecdsa : []
  }
}

const ecdsa: readonly (readonly [SignAlg, string])[] = [
  ['SHA256WithECDSA', 'ECDSA with SHA-256'],
  ['SHA384WithECDSA', 'ECDSA with SHA-384'],
  ['SHA512WithECDSA', 'ECDSA with SHA-512'],
]

/** Ed25519 and ECDSA take no context (the device ignores one); Ed25519ctx needs one. */
const takesContext = (alg: string | undefined) => alg === undefined || /^Ed(25519ctx|25519ph|448)/.test(alg)

export function signatureForm(use: UseContext, direction: 'sign' | 'verify'): HTMLDetailsElement {
  const { key } = use
  const mlDsa = keyTypes[key.type].kind === 'mldsa'
  const schemes = schemesOf(key.type)
  const alg = schemes.length > 0 ? select('alg', schemes, schemes[0]![0]) : undefined
  const message = dataField(messageRules())
  const ctxRules: DataRules = {
    name: 'Context',
    hint: `At most ${LIMITS.signCtx} bytes, bound into the signature: verifying needs the same.`,
    format: 'text',
    min: 0,
    max: LIMITS.signCtx,
    optional: true,
  }
  const ctx = dataField(ctxRules)
  const follow = () => {
    ctx.show(takesContext(alg?.value))
    // RFC 8032 defines no Ed25519ctx without a context.
    ctxRules.optional = alg?.value !== 'Ed25519ctx'
    ctxRules.min = ctxRules.optional ? 0 : 1
  }
  alg?.addEventListener('change', follow)
  follow()
  const signatureMax = mlDsa ? LIMITS.mlDsa : LIMITS.signature
  const signature = dataField({
    name: 'Signature',
    hint: mlDsa
      ? `The ${key.type} signature: ${(keyTypes[key.type] as { signature: number }).signature} bytes.`
      : key.type.startsWith('ED')
        ? `The raw signature (${key.type === 'ED25519' ? 64 : 114} bytes).`
        : 'The DER signature (ECDSA-Sig-Value).',
    format: 'base64',
    min: 1,
    max: signatureMax,
  })
  const verifying = direction === 'verify'
  const title = verifying ? 'Verify a signature' : 'Sign'
  return opSection(use, {
    title,
    submit: verifying ? 'Verify' : 'Sign',
    doing: verifying ? 'Verifying…' : 'Signing…',
    rows: [
      ...(alg ? [field('Scheme', alg, 'Verifying needs the same scheme.')] : []),
      message.row,
      ctx.row,
      ...(verifying ? [signature.row] : []),
    ],
    async run() {
      const got = await readAll({ msg: message, ctx, ...(verifying ? { signature } : {}) })
      const session = use.screen.ctx.session
      const base = { kid: key.kid, msg: got.msg!, ...(got.ctx ? { ctx: got.ctx } : {}) }
      if (verifying) {
        const input = { ...base, signature: got.signature! }
        const valid = mlDsa
          ? await cryptoCalls.mlDsaVerify(session, input)
          : await cryptoCalls.verifySignature(session, { ...input, alg: alg!.value as SignAlg })
        const words = valid ? 'The signature is valid.' : 'The signature does NOT match this message.'
        return { said: words, shown: [verdictView(valid, words)] }
      }
      const bytes = mlDsa
        ? (await cryptoCalls.mlDsaSign(session, base)).signature
        : await cryptoCalls.sign(session, { ...base, alg: alg!.value as SignAlg })
      return {
        said: `Signed ${base.msg.length} bytes with ${mlDsa ? key.type : alg!.value}.`,
        shown: [outputView({ name: 'Signature', bytes, file: 'signature.bin' })],
      }
    },
  })
}

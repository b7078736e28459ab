// Encrypt and decrypt (AES ECB, CBC, GCM): with an AES key directly, or with a private ECDH key and
// a peer, whose agreement (and an optional context) makes the AES key.
import { field, h, select } from '../../../dom.js'
import { cryptoCalls, type CipherAlg } from '../../../../client/browser.js'
import { keyTypes } from '../../../../protocol/browser.js'
import { dataField, messageRules, readAll, type DataField, type DataRules } from './data-field.js'
import { aesWidths, type KeyFacts } from './key-uses.js'
import { outputView } from './op-output.js'
import { opSection, type UseContext } from './op-section.js'
import { agreementContext, peerField, type PeerField } from './peer-field.js'

/** The device's bounds (docs/api.md "Keys and ciphers"). */
const DECRYPT_MAX = 2064
const AAD_MAX = 64
const CIPHER_CTX_MAX = 64
const BLOCK = 16
const IV_BYTES = 16
const TAG_BYTES = 16

const MODE_WORDS = {
  GCM: 'authenticated: an IV and a tag (recommended)',
  CBC: 'padded: an IV, no tag',
  ECB: 'whole 16-byte blocks, no IV (reveals repeated blocks)',
} as const

type Mode = keyof typeof MODE_WORDS

function modeSelect(key: KeyFacts): HTMLSelectElement {
  const widths = aesWidths(key)
  const options = widths
    .toReversed()
    .flatMap((bits) => (Object.keys(MODE_WORDS) as Mode[]).map((mode) => [`AES${bits}-${mode}`, mode, bits] as const))
    .map(([alg, mode, bits]) => [alg, `AES-${bits} ${mode}: ${MODE_WORDS[mode]}`] as const)
  return select('alg', options, `AES${widths.at(-1)}-GCM`)
}

const modeOf = (alg: string) => alg.slice(-3) as Mode

/** An agreement key's extra fields: the peer and the HKDF context, which decrypt needs the same. */
interface Agreement {
  peer: PeerField
  ctx: DataField
}

function agreementOf(use: UseContext): Agreement | undefined {
  if (keyTypes[use.key.type].kind === 'aes') return undefined
  return {
    peer: peerField(use),
    ctx: agreementContext('AES key', CIPHER_CTX_MAX, 'Decrypting'),
  }
}

const aadField = () =>
  dataField({
    name: 'Associated data',
    hint:
      'Optional, GCM only: authenticated with the message but not encrypted; ' +
      `at most ${AAD_MAX} bytes. Decrypting needs the same.`,
    format: 'text',
    min: 0,
    max: AAD_MAX,
    optional: true,
  })

/** The fields a mode needs: ECB and CBC whole blocks where asked, GCM alone with an AAD. */
function followMode(alg: HTMLSelectElement, change: (mode: Mode) => void): HTMLElement {
  alg.addEventListener('change', () => change(modeOf(alg.value)))
  change(modeOf(alg.value))
  return field('Mode', alg, 'The AES width and the mode; decrypting needs the same.')
}

export interface DecryptForm {
  readonly element: HTMLDetailsElement
  /** Fills it with what an encrypt gave, and opens it. */
  fill(alg: string, ciphertext: Uint8Array, iv?: Uint8Array, tag?: Uint8Array): void
}

export function encryptForm(use: UseContext, decrypt?: DecryptForm): HTMLDetailsElement {
  const alg = modeSelect(use.key)
  const rules = messageRules(' ECB takes whole 16-byte blocks.')
  const message = dataField(rules)
  const aad = aadField()
  const agreement = agreementOf(use)
  const modeRow = followMode(alg, (mode) => {
    rules.multipleOf = mode === 'ECB' ? BLOCK : undefined
    aad.show(mode === 'GCM')
  })
  return opSection(use, {
    title: 'Encrypt',
    submit: 'Encrypt',
    doing: 'Encrypting…',
    rows: [modeRow, message.row, aad.row, ...(agreement ? [...agreement.peer.rows, agreement.ctx.row] : [])],
    async run() {
      const got = await readAll({ msg: message, aad, ...(agreement ? { ctx: agreement.ctx } : {}) })
      const peer = agreement?.peer.read() ?? {}
      const cipher = alg.value as CipherAlg
      const { ciphertext, iv, tag } = await cryptoCalls.encrypt(use.screen.ctx.session, {
        alg: cipher,
        kid: use.key.kid,
        msg: got.msg!,
        ...(got.aad ? { aad: got.aad } : {}),
        ...(got.ctx ? { ctx: got.ctx } : {}),
        ...peer,
      })
      return {
        said: `Encrypted ${got.msg!.length} bytes with ${cipher}.`,
        shown: [
          outputView({ name: 'Ciphertext', bytes: ciphertext, file: 'ciphertext.bin' }),
          ...(iv ? [outputView({ name: 'IV', bytes: iv, file: 'iv.bin' })] : []),
          ...(tag ? [outputView({ name: 'Tag', bytes: tag, file: 'tag.bin' })] : []),
          ...(decrypt
            ? [
                h(
                  'button',
                  { type: 'button', onclick: () => decrypt.fill(cipher, ciphertext, iv, tag) },
                  'Decrypt it in the form below',
                ),
              ]
            : []),
        ],
      }
    },
  })
}

export function decryptForm(use: UseContext): DecryptForm {
  const alg = modeSelect(use.key)
  const cipherRules: DataRules = {
    name: 'Ciphertext',
    hint: `What encrypt gave, 1 to ${DECRYPT_MAX} bytes.`,
    format: 'base64',
    min: 1,
    max: DECRYPT_MAX,
  }
  const ciphertext = dataField(cipherRules)
  const iv = dataField({
    name: 'IV',
    hint: 'The 16 bytes encrypt gave with the ciphertext.',
    format: 'base64',
    min: IV_BYTES,
    max: IV_BYTES,
  })
  const tag = dataField({
    name: 'Tag',
    hint: 'The 16 bytes encrypt gave with the ciphertext: GCM checks the message against it.',
    format: 'base64',
    min: TAG_BYTES,
    max: TAG_BYTES,
  })
  const aad = aadField()
  const agreement = agreementOf(use)
  const modeRow = followMode(alg, (mode) => {
    cipherRules.multipleOf = mode === 'GCM' ? undefined : BLOCK
    iv.show(mode !== 'ECB')
    tag.show(mode === 'GCM')
    aad.show(mode === 'GCM')
  })
  const element = opSection(use, {
    title: 'Decrypt',
    submit: 'Decrypt',
    doing: 'Decrypting…',
    rows: [
      modeRow,
      ciphertext.row,
      iv.row,
      tag.row,
      aad.row,
      ...(agreement ? [...agreement.peer.rows, agreement.ctx.row] : []),
    ],
    async run() {
      const got = await readAll({ msg: ciphertext, iv, tag, aad, ...(agreement ? { ctx: agreement.ctx } : {}) })
      const peer = agreement?.peer.read() ?? {}
      const cipher = alg.value as CipherAlg
      const plaintext = await cryptoCalls.decrypt(use.screen.ctx.session, {
        alg: cipher,
        kid: use.key.kid,
        msg: got.msg!,
        ...(got.iv ? { iv: got.iv } : {}),
        ...(got.tag ? { tag: got.tag } : {}),
        ...(got.aad ? { aad: got.aad } : {}),
        ...(got.ctx ? { ctx: got.ctx } : {}),
        ...peer,
      })
      return {
        said: `Decrypted ${plaintext.length} bytes with ${cipher}.`,
        shown: [outputView({ name: 'Plaintext', bytes: plaintext, file: 'plaintext.bin', text: true })],
      }
    },
  })
  return {
    element,
    fill(chosen, bytes, ivBytes, tagBytes) {
      alg.value = chosen
      alg.dispatchEvent(new Event('change'))
      ciphertext.fill(bytes)
      if (ivBytes) iv.fill(ivBytes)
      if (tagBytes) tag.fill(tagBytes)
      element.open = true
      element.scrollIntoView()
      ;(ciphertext.control as HTMLElement).focus()
    },
  }
}

// Key wrap and unwrap (RFC 3394): with an AES key as the KEK (cut to the width chosen), or with a
// private ECDH key and a peer, whose agreement (and an optional context) makes the KEK.
import { field, select } from '../../../dom.js'
import { cryptoCalls, LIMITS, type WrapAlg } from '../../../../client/browser.js'
import { keyTypes } from '../../../../protocol/browser.js'
import { dataField, readAll, type DataField } from './data-field.js'
import { aesWidths } from './key-uses.js'
import { outputView } from './op-output.js'
import { opSection, type UseContext } from './op-section.js'
import { agreementContext, peerField } from './peer-field.js'

/** RFC 3394 works on 8-byte halves; the wrapped key is 8 bytes longer. */
const HALF = 8

type Direction = 'wrap' | 'unwrap'

export function wrapForm(use: UseContext, direction: Direction): HTMLDetailsElement {
  const widths = aesWidths(use.key)
  const alg = select(
    'alg',
    widths.toReversed().map((bits) => [`AES${bits}`, `AES-${bits}`] as const),
    `AES${widths.at(-1)}`,
  )
  const wrapping = direction === 'wrap'
  const material = dataField(
    wrapping
      ? {
          name: 'Key to wrap',
          hint: `The key's bytes: ${2 * HALF} to ${LIMITS.msg}, a multiple of ${HALF}.`,
          format: 'base64',
          min: 2 * HALF,
          max: LIMITS.msg,
          multipleOf: HALF,
        }
      : {
          name: 'Wrapped key',
          hint: `What wrap gave: ${3 * HALF} to ${LIMITS.msg + HALF} bytes, a multiple of ${HALF}.`,
          format: 'base64',
          min: 3 * HALF,
          max: LIMITS.msg + HALF,
          multipleOf: HALF,
        },
  )
  const iv = dataField({
    name: 'IV',
    hint: `Optional: ${LIMITS.iv} bytes in place of RFC 3394's default (A6A6A6A6A6A6A6A6); unwrapping needs the same.`,
    format: 'base64',
    min: LIMITS.iv,
    max: LIMITS.iv,
    optional: true,
  })
  const agreement = keyTypes[use.key.type].kind !== 'aes'
  const peer = agreement ? peerField(use) : undefined
  const fields: Record<string, DataField> = { msg: material, iv }
  if (agreement) fields.ctx = agreementContext('KEK', LIMITS.wrapCtx, 'Unwrapping')
  const title = wrapping ? 'Wrap a key' : 'Unwrap a key'
  return opSection(use, {
    title,
    submit: title,
    doing: wrapping ? 'Wrapping…' : 'Unwrapping…',
    rows: [
      field('Key-encryption key width', alg, 'The AES width of the KEK; unwrapping needs the same.'),
      material.row,
      iv.row,
      ...(peer ? peer.rows : []),
      ...(fields.ctx ? [fields.ctx.row] : []),
    ],
    async run() {
      const got = await readAll(fields)
      const input = {
        kid: use.key.kid,
        msg: got.msg!,
        alg: alg.value as WrapAlg,
        ...(got.iv ? { iv: got.iv } : {}),
        ...(got.ctx ? { ctx: got.ctx } : {}),
        ...(peer?.read() ?? {}),
      }
      const session = use.screen.ctx.session
      const bytes = wrapping ? await cryptoCalls.wrap(session, input) : await cryptoCalls.unwrap(session, input)
      return wrapping
        ? {
            said: `Wrapped a key of ${input.msg.length} bytes.`,
            shown: [outputView({ name: 'Wrapped key', bytes, file: 'wrapped-key.bin' })],
          }
        : {
            said: `Unwrapped a key of ${bytes.length} bytes; its integrity check passed.`,
            shown: [outputView({ name: 'Unwrapped key', bytes, file: 'unwrapped-key.bin' })],
          }
    },
  })
}

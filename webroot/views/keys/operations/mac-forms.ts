// HMAC make and check: with an HMAC key (its type is the digest), or with a private ECDH key and a
// peer, the raw shared secret as the HMAC key and the digest chosen.
import { field } from '../../../dom.js'
import { cryptoCalls, LIMITS, type Digest } from '../../../../client/browser.js'
import { keyTypes } from '../../../../protocol/browser.js'
import { dataField, messageRules, readAll } from './data-field.js'
import { digestSelect } from './digest-select.js'
import { outputView, verdictView } from './op-output.js'
import { opSection, type UseContext } from './op-section.js'
import { peerField } from './peer-field.js'

export function macForm(use: UseContext, direction: 'make' | 'check'): HTMLDetailsElement {
  const { key } = use
  const agreement = keyTypes[key.type].kind !== 'hmac'
  const alg = agreement ? digestSelect() : undefined
  const peer = agreement ? peerField(use) : undefined
  const message = dataField(messageRules())
  const mac = dataField({
    name: 'MAC',
    hint: `The MAC to check, at most ${LIMITS.mac} bytes.`,
    format: 'base64',
    min: 1,
    max: LIMITS.mac,
  })
  const checking = direction === 'check'
  return opSection(use, {
    title: checking ? 'Check an HMAC' : 'Make an HMAC',
    submit: checking ? 'Check the HMAC' : 'Make the HMAC',
    doing: checking ? 'Checking the HMAC…' : 'Making the HMAC…',
    rows: [
      ...(alg ? [field('Digest', alg, 'The hash of the HMAC; checking needs the same.')] : []),
      ...(peer ? peer.rows : []),
      message.row,
      ...(checking ? [mac.row] : []),
    ],
    async run() {
      const got = await readAll({ msg: message, ...(checking ? { mac } : {}) })
      const input = {
        kid: key.kid,
        msg: got.msg!,
        ...(alg ? { alg: alg.value as Digest } : {}),
        ...(peer?.read() ?? {}),
      }
      const session = use.screen.ctx.session
      if (checking) {
        const valid = await cryptoCalls.hmacVerify(session, { ...input, mac: got.mac! })
        const words = valid ? 'The MAC matches this message.' : 'The MAC does NOT match this message.'
        return { said: words, shown: [verdictView(valid, words)] }
      }
      const bytes = await cryptoCalls.hmac(session, input)
      return {
        said: `Made the HMAC of ${input.msg.length} bytes.`,
        shown: [outputView({ name: 'MAC', bytes, file: 'hmac.bin' })],
      }
    },
  })
}

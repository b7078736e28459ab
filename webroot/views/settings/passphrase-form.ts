// The passphrase change, done in the page as hemctl's client does it (docs/api.md "Configuration
// rules"): the new passphrase's key is derived here, and only its public half and an HMAC proving
// it answered the device's nonce are sent. The passphrases themselves never leave the page.
import { derivePassphraseKeyAsync, passphraseChangeHmac, toBase64, UnauthorizedError } from '../../../client/browser.js'
import { DeviceSession } from '../../device-session.js'
import { reworded } from '../../refusal-words.js'
import { field, h } from '../../dom.js'
import type { AppContext } from '../../view.js'
import { CONFIG_PATH, CONFIG_SCOPE, type Config } from './config-form.js'
import { refuseIfInvalid, setFieldError } from '../../field-error.js'
import { refusedOverPlainHttp } from '../../plain-http.js'

/**
 * The contract sets no rule of its own (the device only ever sees a key derived from it); this is
 * the app's floor, so that a typo of a few keys cannot become the passphrase.
 */
export const MIN_PASSPHRASE_CHARACTERS = 8

export const CHANGED_MESSAGE = 'Your passphrase was changed, and the old one no longer works: log in with the new one.'

const password = (autocomplete: string) => h('input', { type: 'password', autocomplete, spellcheck: 'false' })

export function passphraseForm(ctx: AppContext): HTMLFormElement {
  const current = password('current-password')
  const next = password('new-password')
  const repeat = password('new-password')

  const check = () => {
    setFieldError(current, current.value ? undefined : 'Type your current passphrase.')
    setFieldError(
      next,
      [...next.value].length < MIN_PASSPHRASE_CHARACTERS
        ? `At least ${MIN_PASSPHRASE_CHARACTERS} characters.`
        : next.value === current.value
          ? 'The new passphrase must differ from the current one.'
          : undefined,
    )
    setFieldError(repeat, repeat.value === next.value ? undefined : 'The two new passphrases differ.')
  }

  const change = async () => {
    check()
    refuseIfInvalid(form)
    const [old, fresh] = [current.value, next.value]
    form.reset()
    // The change is made under a login with the current passphrase, which proves it.
    let proven: DeviceSession
    try {
      proven = await DeviceSession.open(old, CONFIG_SCOPE)
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error
      setFieldError(current, 'This is not the current passphrase.')
      current.focus()
      throw reworded(error, 'The device refused the current passphrase; nothing was changed')
    }
    // A device restored from a backup derives its owner's keys with the source's eid (`login_eid`).
    const { eid, login_eid: loginEid } = (await proven.get(CONFIG_PATH, CONFIG_SCOPE)) as Config
    const key = await derivePassphraseKeyAsync(fresh, String(loginEid ?? eid))
    // The nonce is single use and lives 60 s: read it once the slow derivation is done.
    const { nonce, spk } = (await proven.get(CONFIG_PATH, CONFIG_SCOPE)) as Config
    const body = {
      userkey: toBase64(key.publicKey),
      userkey_nonce: String(nonce),
      userkey_hmac: passphraseChangeHmac(key.seed, String(spk), String(nonce)),
    }
    key.seed.fill(0)
    await proven.request(CONFIG_PATH, CONFIG_SCOPE, { body })
    ctx.logOut(CHANGED_MESSAGE)
    return CHANGED_MESSAGE
  }

  const form = h(
    'form',
    {
      'aria-labelledby': 'passphrase-title',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        void ctx.feedback.run('Changing the passphrase (deriving the new key takes a moment)…', change)
      },
    },
    h('h3', { id: 'passphrase-title' }, 'Change the passphrase'),
    field('Current passphrase', current),
    field(
      'New passphrase',
      next,
      `At least ${MIN_PASSPHRASE_CHARACTERS} characters; several words are best. ` +
        'It must not be the master passphrase (the device refuses that one).',
    ),
    field('Repeat the new passphrase', repeat),
    h('button', { type: 'submit' }, 'Change the passphrase'),
  )
  return refusedOverPlainHttp(form)
}

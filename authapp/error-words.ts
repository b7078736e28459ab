// Every failure in words for the phone's owner: which step, what it means, what to do. Nothing secret reaches a
// message: the core's errors name the step and the status only, and texts from the network are made printable.
import { BrokerAnswerError, PairingDatabaseError, PairingError } from '../authenticator/browser.js'
import { printable } from '../client/browser.js'
import { PageError } from './page-error.js'

export function describeError(error: unknown): string {
  if (error instanceof BrokerAnswerError) return brokerWords(error)
  if (error instanceof PairingError) return `Cannot pair: ${printable(error.message)}.`
  if (error instanceof PageError) return error.message
  if (error instanceof PairingDatabaseError)
    return `This browser cannot keep the pairings: ${error.message}. Is private browsing on, or the page open twice?`
  // IndexedDB and WebCrypto failures: their name says enough, their message may be the browser's long story.
  if (error instanceof DOMException) return `This browser refused: ${error.name}. Is private browsing on?`
  return `Something went wrong: ${error instanceof Error ? printable(error.message) : 'an unknown failure'}.`
}

function brokerWords(error: BrokerAnswerError): string {
  const status = error.status === undefined ? '' : ` (HTTP ${error.status})`
  switch (error.kind) {
    case 'unavailable':
      return error.status === undefined
        ? 'The broker did not answer. Check the network connection and try again.'
        : `The broker failed${status}. Try again later.`
    case 'fatal':
      return `The broker refused this phone's proof${status}.`
    case 'expired':
      return `The broker no longer knows this: it expired or was removed${status}.`
    case 'gone':
      return `This was already answered, withdrawn or refused elsewhere${status}.`
    case 'refused':
      return `The broker refused the request${status}.`
  }
}

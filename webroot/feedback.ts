// The page's one status line (role=status) and one alert (role=alert), and the rule that one
// user action runs at a time.
import {
  BrokerRefusedError,
  BrokerUnreachableError,
  DeviceRefusedError,
  DeviceUnreachableError,
  UnexpectedBrokerAnswerError,
} from '../client/browser.js'
import { SessionEndedError } from './device-session.js'
import { PageError } from './page-error.js'
import { refusalWords } from './refusal-words.js'

export type Action = () => Promise<string | void>

export class Feedback {
  #busy = false

  constructor(
    private readonly notice: HTMLElement,
    private readonly alert: HTMLElement,
  ) {}

  get busy(): boolean {
    return this.#busy
  }

  /**
   * Runs one user action: `doing` in the status line meanwhile, then what it returns there or,
   * when it fails, the failure in the alert. An action asked for meanwhile is dropped (a double click).
   */
  async run(doing: string, action: Action): Promise<boolean> {
    if (this.#busy) return false
    this.#busy = true
    document.body.setAttribute('aria-busy', 'true')
    this.clearError()
    this.notice.textContent = doing
    try {
      this.notice.textContent = (await action()) ?? ''
      return true
    } catch (error) {
      this.notice.textContent = ''
      this.fail(error)
      return false
    } finally {
      this.#busy = false
      document.body.removeAttribute('aria-busy')
    }
  }

  /** Progress of the running action, in the status line. */
  progress(text: string): void {
    this.notice.textContent = text
  }

  fail(error: unknown): void {
    // The login form says why the session ended; what failed with it needs no alert of its own.
    if (error instanceof SessionEndedError) return
    this.alert.textContent = describeError(error)
    this.alert.hidden = false
  }

  clearError(): void {
    this.alert.hidden = true
    this.alert.textContent = ''
  }
}

/** The device's refusal in its words, with its status; the page's own failures as they are; anything else plainly. */
export function describeError(error: unknown): string {
  if (error instanceof DeviceRefusedError) return `${refusalWords(error)} (HTTP ${error.status})`
  if (error instanceof DeviceUnreachableError) return 'The device did not answer. Is it still running and reachable?'
  if (error instanceof BrokerRefusedError) return `The cloud refused: ${error.message}.`
  if (error instanceof BrokerUnreachableError)
    return `The cloud did not answer (${error.url}). Is it running and reachable?`
  if (error instanceof UnexpectedBrokerAnswerError)
    return `The cloud answered in a shape it should not: ${error.message}.`
  if (error instanceof PageError) return error.message
  return `Something went wrong: ${error instanceof Error ? error.message : String(error)}`
}

/** What the user typed cannot be sent: `message` says why, before anything reaches the device. */
export class InputError extends PageError {
  override readonly name = 'InputError'
}

// The page's one status line (role=status) and one alert (role=alert), and the rule that one user action runs at
// a time.
import { describeError } from './error-words.js'

export class Feedback {
  #busy = false

  constructor(
    private readonly notice: HTMLElement,
    private readonly alert: HTMLElement,
  ) {}

  /**
   * Runs one user action: `doing` in the status line meanwhile, then what it returns there or, when it fails, the
   * failure in words in the alert. An action asked for meanwhile is dropped (a double tap).
   */
  async run(doing: string, action: () => Promise<string | void>): Promise<boolean> {
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

  /** A note in the status line: something changed without the user asking (a request answered elsewhere). */
  tell(text: string): void {
    this.notice.textContent = text
  }

  fail(error: unknown): void {
    this.alert.textContent = describeError(error)
    this.alert.hidden = false
  }

  clearError(): void {
    this.alert.hidden = true
    this.alert.textContent = ''
  }
}

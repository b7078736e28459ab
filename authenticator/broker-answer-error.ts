/**
 * The broker's answer, mapped as §4.2 says: `fatal` (401: our proof is refused, retrying cannot help),
 * `expired` (404), `gone` (410: cancelled, refused or answered elsewhere), `refused` (any other 4xx),
 * `unavailable` (≥ 500 or no answer, after the retries).
 */
export class BrokerAnswerError extends Error {
  override readonly name = 'BrokerAnswerError'
  constructor(
    readonly kind: 'fatal' | 'expired' | 'gone' | 'refused' | 'unavailable',
    readonly status: number | undefined,
    what: string,
    options?: ErrorOptions,
  ) {
    super(`${what}: ${status === undefined ? 'no answer' : `status ${status}`} (${kind})`, options)
  }
}

export function answerKind(status: number): BrokerAnswerError['kind'] {
  if (status === 401) return 'fatal'
  if (status === 404) return 'expired'
  if (status === 410) return 'gone'
  return status >= 500 ? 'unavailable' : 'refused'
}

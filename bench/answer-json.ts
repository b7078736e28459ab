import type { HttpResponse } from 'uWebSockets.js'
import { BODY_LIMIT, readBody } from '../gateway/index.js'

/**
 * Answers a POST with the JSON that `answer` makes of its body, the way the device's gateway
 * writes: corked (the answer comes after the handler returned) and never after an abort. Any
 * failure answers 500, which the bench counts as a non-2xx answer.
 */
export function answerJson(res: HttpResponse, answer: (body: Buffer) => unknown): void {
  let aborted = false
  res.onAborted(() => {
    aborted = true
  })
  const write = (status: string, value: unknown): void => {
    if (aborted) return
    res.cork(() => {
      res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(JSON.stringify(value))
    })
  }
  readBody(res, BODY_LIMIT)
    .then(answer)
    .then(
      (value) => write('200 OK', value),
      (error: unknown) => write('500 Internal Server Error', { error: 'internal_error', message: String(error) }),
    )
}

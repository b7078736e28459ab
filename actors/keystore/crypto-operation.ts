import {
  type CommandReply,
  type CommandRequest,
  fail,
  KeyAttributeError,
  LogResult,
  type LogResultNumber,
} from '../../protocol/index.js'
import { journalSubject } from '../host/index.js'
import { CryptoRefusal } from './crypto-refusal.js'
import { CryptoRequest, CryptoRequestError } from './crypto-request.js'
import type { KeystoreContext } from './keystore-context.js'
import { holdsUseScope } from './use-scope.js'

/** A JSON answer, or undefined for the empty body of a verify. */
export type CryptoAnswer = Record<string, unknown> | undefined

/** One crypto operation of crypto-contract §3 (or derive, §2), as `cryptoOperation` runs it. */
export interface CryptoOperation<R> {
  /** The LOG_TYPE of its records. */
  readonly logType: number
  /**
   * Derive changes the repository: its scope is not the key's (the guard checked `keymgmt:derive`
   * or `keymgmt:gen`), and it journals its own success before the key is stored.
   */
  readonly keyChange?: true
  /** The body's other fields, checked (CryptoRequestError or KeyAttributeError: 400). */
  parse(request: CryptoRequest): R
  /**
   * The operation: a CryptoRefusal is its 406. Each operation turns the engine's refusals it expects
   * (a peer point off the curve, a scalar out of range) into one; any other error is a bug: a 500.
   */
  run(actor: KeystoreContext, request: R, kid: string, req: CommandRequest): CryptoAnswer | Promise<CryptoAnswer>
}

/**
 * The shape every crypto operation shares: 409 while keys cannot be served; the body parsed here
 * (the gateway forwards it raw); the exact `keymgmt:use:<kid>` scope of the body's KID, before any
 * 400 (§0), so a body without a readable KID, which no scope can match, is a 403; 400 for a
 * malformed field; 406 when the operation fails; 200. Every 200, 400 and 406 is journaled (with
 * the KID when the request had a readable one) before it is answered; the 409 of a device that
 * cannot serve keys is not an operation and is not.
 */
export async function cryptoOperation<R>(
  actor: KeystoreContext,
  req: CommandRequest,
  op: CryptoOperation<R>,
): Promise<CommandReply> {
  const unavailable = actor.unavailable()
  if (unavailable) return unavailable
  const journal = (result: LogResultNumber, source: number, kid: string | undefined) =>
    actor.journal([
      {
        type: op.logType,
        result,
        ...journalSubject(req.principal),
        data: { source, rid: req.rid, ...(kid ? { kid } : {}) },
      },
    ])
  const badRequest = async (message: string, kid: string | undefined) => {
    await journal(LogResult.ERROR, 400, kid)
    return fail(400, 'bad_request', message)
  }

  let request: CryptoRequest
  try {
    const raw = (req.body as { raw?: unknown } | undefined)?.raw
    request = CryptoRequest.parse(typeof raw === 'string' ? raw : '')
  } catch (err) {
    if (!(err instanceof CryptoRequestError)) throw err
    // Derive's scope (checked by the guard) names no key: its unreadable body is malformed.
    return op.keyChange ? badRequest(err.message, undefined) : actor.denied(req)
  }
  const { kid } = request
  // The KID is in the body, which the guard does not read (it let any `keymgmt:use:…` through):
  // this is the one exact check of the scope.
  if (!op.keyChange && !holdsUseScope(req.principal, kid)) return actor.denied(req)

  let parsed: R
  try {
    parsed = op.parse(request)
  } catch (err) {
    if (!(err instanceof CryptoRequestError || err instanceof KeyAttributeError)) throw err
    return badRequest(err.message, kid)
  }
  let answer: CryptoAnswer
  try {
    answer = await op.run(actor, parsed, kid, req)
  } catch (err) {
    if (!(err instanceof CryptoRefusal)) throw err
    await journal(LogResult.FAILED, 406, kid)
    return fail(406, err.code, err.message)
  }
  if (!op.keyChange) await journal(LogResult.OK, 200, kid)
  return answer === undefined ? { status: 200 } : { status: 200, body: answer }
}

// The errors a client of the device meets: one class per status the API answers with, so that
// callers catch what they can handle (`instanceof NotFoundError`) and print the rest.

/** The device answered, and not with success. `code` is the API's `error` field, `message` its `message`. */
export class DeviceRefusedError extends Error {
  override name = 'DeviceRefusedError'
  readonly code: string | undefined

  constructor(
    readonly status: number,
    readonly body: unknown,
    /** What was asked, as `METHOD /path`. */
    readonly what: string,
  ) {
    super(`${what}: the device answered ${status}${describe(body)}`)
    const code = (body as { error?: unknown } | undefined)?.error
    this.code = typeof code === 'string' ? code : undefined
  }
}

function describe(body: unknown): string {
  const { error, message } = (typeof body === 'object' && body !== null ? body : {}) as {
    error?: unknown
    message?: unknown
  }
  if (typeof message === 'string') return ` (${message})`
  return typeof error === 'string' ? ` (${error})` : ''
}

/** 400: the request is malformed. */
export class BadRequestError extends DeviceRefusedError {
  override name = 'BadRequestError'
}
/** 401: no token, a token that is void (expired, from another boot), or a login refused. */
export class UnauthorizedError extends DeviceRefusedError {
  override name = 'UnauthorizedError'
}
/** 403: the token's scope or role does not permit the request. */
export class ForbiddenError extends DeviceRefusedError {
  override name = 'ForbiddenError'
}
/** 404: no such key, file, disk or upload. */
export class NotFoundError extends DeviceRefusedError {
  override name = 'NotFoundError'
}
/** 406: understood and refused (a rejected image, a duplicate key, a check that does not verify). */
export class NotAcceptableError extends DeviceRefusedError {
  override name = 'NotAcceptableError'
}
/** 409: not now: the device's state forbids it (not personalised, a fail state, busy). */
export class ConflictError extends DeviceRefusedError {
  override name = 'ConflictError'
}
/** 411, 413: the body has no length, or is too large. */
export class PayloadError extends DeviceRefusedError {
  override name = 'PayloadError'
}
/** 503: a service of the device is not reachable right now; worth trying again. */
export class UnavailableError extends DeviceRefusedError {
  override name = 'UnavailableError'
}
/** 507: the device's storage is full; nothing was stored. */
export class StorageFullError extends DeviceRefusedError {
  override name = 'StorageFullError'
}
/** Any other status (500 and the like): the device failed. */
export class DeviceFailedError extends DeviceRefusedError {
  override name = 'DeviceFailedError'
}

const byStatus: Record<number, typeof DeviceRefusedError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  406: NotAcceptableError,
  409: ConflictError,
  411: PayloadError,
  413: PayloadError,
  503: UnavailableError,
  507: StorageFullError,
}

/** The error class for an answer's status. */
export function refusal(status: number, body: unknown, what: string): DeviceRefusedError {
  return new (byStatus[status] ?? DeviceFailedError)(status, body, what)
}

/** The device answered with success, but not in the shape the API gives that answer. */
export class UnexpectedAnswerError extends Error {
  override name = 'UnexpectedAnswerError'
}

/** The device could not be reached, or the connection broke. */
export class DeviceUnreachableError extends Error {
  override name = 'DeviceUnreachableError'
  constructor(
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach the device at ${url}: ${(options.cause as Error)?.message ?? String(options.cause)}`, options)
  }
}

/** The device shows another certificate than the one pinned for its URL: maybe another device, maybe an attacker. */
export class FingerprintMismatchError extends Error {
  override name = 'FingerprintMismatchError'
  constructor(
    readonly origin: string,
    readonly pinned: string,
    readonly presented: string,
  ) {
    super(
      `the certificate of ${origin} changed: pinned SHA-256 ${pinned}, presented ${presented}. ` +
        'If the device got a new certificate on purpose, forget the old one ' +
        '(hemctl trust forget URL) and connect again',
    )
  }
}

// What the key repository refuses. Messages name KIDs and slots, never key material.

/** A key record that is not one the repository may store: a bad field, or bytes that do not decode. */
export class KeyRecordFormatError extends Error {
  override readonly name = 'KeyRecordFormatError'
}

/** `add` of a KID the repository already holds. */
export class DuplicateKeyError extends Error {
  override readonly name = 'DuplicateKeyError'
  constructor(readonly kid: string) {
    super(`a key with KID ${kid} is already stored`)
  }
}

/** `replace` of a KID the repository does not hold. */
export class UnknownKeyError extends Error {
  override readonly name = 'UnknownKeyError'
  constructor(readonly kid: string) {
    super(`no key with KID ${kid} is stored`)
  }
}

/** No free or deleted slot is left for a new key or a new version of one. */
export class RepositoryFullError extends Error {
  override readonly name = 'RepositoryFullError'
  constructor() {
    super('the key repository has no slot left')
  }
}

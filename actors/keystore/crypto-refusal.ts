/** A 406 of crypto-contract §0: the operation failed (unusable key, bad signature, mismatch, ...). */
export class CryptoRefusal extends Error {
  override readonly name = 'CryptoRefusal'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

import type { Variant } from './types.js'

export class HalError extends Error {
  override name = 'HalError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

export class HalLockedError extends HalError {
  override name = 'HalLockedError'
  constructor(readonly dataDir: string, readonly pid: number) {
    super(
      `data dir ${dataDir} is in use by pid ${pid}; stop that process or pick another data dir with --data DIR`,
    )
  }
}

export class HalVariantMismatchError extends HalError {
  override name = 'HalVariantMismatchError'
  constructor(readonly dataDir: string, readonly stored: Variant, readonly requested: Variant) {
    super(`data dir ${dataDir} holds a ${stored} device; cannot open it as ${requested}`)
  }
}

export class HalCorruptError extends HalError {
  override name = 'HalCorruptError'
}

export class EntropyError extends HalError {
  override name = 'EntropyError'
}

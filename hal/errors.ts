import type { TlsProblemCode, Variant } from './types.js'

export class HalError extends Error {
  override name = 'HalError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

export class HalLockedError extends HalError {
  override name = 'HalLockedError'
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data dir ${dataDir} is in use by pid ${pid}; stop that process or pick another data dir with --data DIR`)
  }
}

export class HalVariantMismatchError extends HalError {
  override name = 'HalVariantMismatchError'
  constructor(
    readonly dataDir: string,
    readonly stored: Variant,
    readonly requested: Variant,
  ) {
    super(`data dir ${dataDir} holds a ${stored} device; cannot open it as ${requested}`)
  }
}

export class HalCorruptError extends HalError {
  override name = 'HalCorruptError'
}

/** The journal anchor in the enclave's store was not made by this device's enclave: another device's, or edited. */
export class JournalAnchorError extends HalCorruptError {
  override name = 'JournalAnchorError'
}

export class EntropyError extends HalError {
  override name = 'EntropyError'
}

/** The operation needs hardware this variant lacks (E has no attestation key). */
export class HalUnsupportedError extends HalError {
  override name = 'HalUnsupportedError'
}

/** The enclave already holds its factory certificate; provisioning happens once. */
export class AlreadyProvisionedError extends HalError {
  override name = 'AlreadyProvisionedError'
  constructor() {
    super('the enclave is already provisioned')
  }
}

/** A certificate chain or key the device will not serve; nothing was staged. */
export class TlsMaterialError extends HalError {
  override name = 'TlsMaterialError'
  constructor(
    readonly code: TlsProblemCode,
    message: string,
  ) {
    super(message)
  }
}

/** Sealed data that does not open: altered, truncated, or sealed under another key. */
export class UnsealError extends HalError {
  override name = 'UnsealError'
}

/** The disk is locked: its handle was closed, or the disks were formatted or erased since it was opened. */
export class DiskLockedError extends HalError {
  override name = 'DiskLockedError'
  constructor(readonly disk: 0 | 1) {
    super(`Disk ${disk} is locked`)
  }
}

/** A write to a disk unlocked read-only. */
export class DiskReadOnlyError extends HalError {
  override name = 'DiskReadOnlyError'
  constructor(readonly disk: 0 | 1) {
    super(`Disk ${disk} is unlocked read-only`)
  }
}

/** The disks have no finished format: nothing to unlock. */
export class DiskNotFormattedError extends HalError {
  override name = 'DiskNotFormattedError'
  constructor() {
    super('the disks are not formatted')
  }
}

/** A format stopped through its signal before it finished: the disks are unformatted, or as they were. */
export class FormatCancelledError extends HalError {
  override name = 'FormatCancelledError'
  constructor(options?: { cause?: unknown }) {
    super('the format of the disks was cancelled before it finished', options)
  }
}

/**
 * The device's storage has no room: a write of device state did not happen. Stands for a full
 * disk where the system error itself cannot travel (across the bus, from another process).
 */
export class StorageFullError extends HalError {
  override name = 'StorageFullError'
}

const NO_SPACE = new Set(['ENOSPC', 'EDQUOT'])

/** Whether `err`, or an error it was caused by, is the storage running out of space. */
export function isStorageFull(err: unknown): boolean {
  const seen = new Set<unknown>()
  for (let at = err; at instanceof Error && !seen.has(at); at = at.cause) {
    seen.add(at)
    if (at instanceof StorageFullError || NO_SPACE.has((at as NodeJS.ErrnoException).code ?? '')) return true
  }
  return false
}

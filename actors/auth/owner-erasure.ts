import { type JournalEntry, LogResult, LogType } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'

/** Who erases: the wipeout of request `rid` (asked by `subject`), or a boot finishing one whose erasure failed. */
export type ErasureOrigin = { rid: string; subject?: string } | 'boot'

/**
 * What a wipeout erases beside the configuration: the owner's login keys and TLS material in the
 * enclave, and the disks (P); each is tried whatever the other does. Journaled either way
 * (WIPEOUT_ERASE): OK once both are erased, ERROR naming what failed, in which case the next boot
 * erases both again before it serves anything. Throws the first failure.
 */
export async function eraseOwnerMaterial(actor: AuthContext, origin: ErasureOrigin): Promise<void> {
  const { enclave, disks } = actor.hal
  const parts: [string, Promise<void>][] = [['enclave', enclave.wipe()]]
  if (disks) parts.push(['disks', disks.erase()])
  const results = await Promise.allSettled(parts.map(([, erasing]) => erasing))
  const failed = parts.filter((_, i) => results[i]!.status === 'rejected').map(([part]) => part)
  const failure = results.find((result) => result.status === 'rejected')?.reason as Error | undefined
  const source = origin === 'boot' ? { source: 'boot' } : { source: failure ? 500 : 200, rid: origin.rid }
  const record: JournalEntry = {
    type: LogType.WIPEOUT_ERASE,
    result: failure ? LogResult.ERROR : LogResult.OK,
    ...(origin !== 'boot' && origin.subject ? { subject: origin.subject } : {}),
    data: { ...source, ...(failure ? { failed, reason: failure.message } : {}) },
  }
  if (!failure) return actor.journal([record])
  await actor
    .journal([record])
    .catch((err: Error) => actor.logger.error({ err: err.message, failed }, 'the failed erasure is not journaled'))
  throw failure
}

// The DIAG build's vocabulary (crypto-contract §5, §6): the fault-injection operations behind
// `/api/diag/*`, which services serve only when hemd runs with `--diag`, and the self-test's answer.

/** The suffix of `fwv` that tells clients they talk to a DIAG build. */
export const DIAG_SUFFIX = '-DIAG'

/** The system service's DIAG operations (`hem.<devid>.cmd.system.<op>`). */
export const SYSTEM_DIAG_OPS = [
  'diag_break_temp',
  'diag_break_trng',
  'diag_test_trng',
  'diag_disable_selftest',
] as const

/** The key store's DIAG operations: its flash image read and damaged. */
export const KEYSTORE_DIAG_OPS = ['diag_memdump', 'diag_corrupt_repo'] as const

/** The auth service's DIAG operation: config, keys and disks erased without a token, then a fresh start. */
export const AUTH_DIAG_OPS = ['diag_wipe_config'] as const

/** The key store's check of every stored record, which the self-test asks for (`keystore.verify_records`). */
export const VERIFY_RECORDS_OP = 'verify_records'

/** `repo_stats` of the self-test (crypto-contract §5), counted in slots of the key store's image. */
export interface SelfTestRepoStats {
  /** Slots in use: live, deleted and invalid. */
  total: number
  deleted: number
  /** Slots whose record does not check (seal, header or contents). */
  invalid: number
  /** Deleted slots below the highest slot in use: holes in the image, reused once no slot is free. */
  fragmented: number
  /** Slots never written (all zero bytes). */
  freeslots: number
}

/** What `keystore.verify_records` answers: the media read again and every record checked. */
export interface RecordCheck {
  intact: boolean
  /** Records found bad by this check that were good before it (KEY_INTEGRITY_ERROR journaled for them). */
  newlyInvalid: number
  repo_stats: SelfTestRepoStats
}

/** Where a key's record sits in the key store's image: list entries carry these in a DIAG build only. */
export interface KeyLocation {
  /** Byte offset of the record, 32-byte aligned. */
  _addr: number
  /** Bytes of the record (header and sealed body), at most 4095. */
  _len: number
}

/** `GET /api/system/selftest` (crypto-contract §5). Times are Unix seconds, 0 for never. */
export interface SelfTestAnswer {
  /** When the self-test before this one ran (periodic, at boot, or asked for). */
  last_selftest_ts: number
  /** `fls_state` as that self-test left it. */
  last_fls_state: number
  last_entropytest_ts: number
  last_kat_ts: number
  /** `fls_state` now, after this self-test. */
  fls_state: number
  /** When this self-test ran. */
  selftest_ts: number
  repo_stats: SelfTestRepoStats
  /** P only: the secure element's state, 0 when it answers and its keys check. */
  se_state?: number
}

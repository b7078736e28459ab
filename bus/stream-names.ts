// Where a device's journal lives on the fleet backend: one JetStream stream per device, one
// message per record (with the comment lines before it), the exact stored bytes.

/** The stream of device `devid` on the backend. */
export function journalStream(devid: string): string {
  return `HEM_JOURNAL_${devid}`
}

/** The subject the mirror publishes the device's records to; the stream takes `hem.fleet.<devid>.>`. */
export function journalSubject(devid: string): string {
  return `hem.fleet.${devid}.journal`
}

/** Headers of every mirrored message: which journal file and which record of it. */
export const FILE_HEADER = 'Hem-File'
export const SEQ_HEADER = 'Hem-Seq'
/**
 * On the last message of every batch the mirror publishes: base64url of the log key's Ed25519
 * signature over eventstore's headMessage(file, seq, chain head after that record), so that every
 * mirrored record is covered by the device's signature before a seal reaches the stream.
 */
export const HEAD_SIG_HEADER = 'Hem-Head-Sig'

/** The record a message's headers name, or undefined when they name none. */
export function headerPosition(
  file: string | undefined,
  seq: string | undefined,
): { file: string; seq: number } | undefined {
  if (!file || !/^[0-9a-f]{8}$/.test(file) || !seq || !/^(0|[1-9a-f][0-9a-f]{0,7})$/.test(seq)) return undefined
  return { file, seq: parseInt(seq, 16) }
}

/** JetStream's deduplication id: a record is the same message however often it is published. */
export function journalMsgId(devid: string, file: string, seq: number): string {
  return `${devid}.${file}.${seq.toString(16)}`
}

/**
 * The stream as the mirror creates it when the backend's operator has not: every record kept
 * (no limits), nothing deleted or purged through the API, publications past the limits an
 * operator may set refused rather than old records dropped.
 */
export function journalStreamConfig(devid: string): Record<string, unknown> & { name: string } {
  return {
    name: journalStream(devid),
    subjects: [`hem.fleet.${devid}.>`],
    retention: 'limits',
    storage: 'file',
    discard: 'new',
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msgs_per_subject: -1,
    num_replicas: 1,
    duplicate_window: 120_000_000_000,
    deny_delete: true,
    deny_purge: true,
  }
}

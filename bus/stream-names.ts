// Where a device's journal lives on the fleet backend: one JetStream stream per device, one
// message per record (with the comment lines before it), the exact stored bytes.
//
// A stream that no longer continues the journal (a foreign message in it cannot be deleted) is left
// as it is, as evidence; the operator starts the next generation of the device's stream, which the
// mirror fills again from the first record still on the device. Generation n > 1 goes by
// `<devid>_<n>` wherever generation 1 goes by the devid: its stream, its subjects (apart from the
// first generation's `hem.fleet.<devid>.>`, which a stream of the same backend could not overlap).

/** The id generation `generation` of device `devid`'s stream goes by: the devid, then `<devid>_<n>`. */
export function journalStreamId(devid: string, generation = 1): string {
  if (!Number.isSafeInteger(generation) || generation < 1) throw new RangeError(`no stream generation ${generation}`)
  return generation === 1 ? devid : `${devid}_${generation}`
}

/** The stream of a device's stream id (journalStreamId) on the backend. */
export function journalStream(id: string): string {
  return `HEM_JOURNAL_${id}`
}

/** The subject the mirror publishes the device's records to; the stream takes `hem.fleet.<id>.>`. */
export function journalSubject(id: string): string {
  return `hem.fleet.${id}.journal`
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
/**
 * Beside HEAD_SIG_HEADER: base64url of the chain head it signs, so that the signature verifies from
 * the message alone. A device whose journal went back finds in it a head it signed and no longer has.
 */
export const HEAD_HEADER = 'Hem-Head'

/** The record a message's headers name, or undefined when they name none. */
export function headerPosition(
  file: string | undefined,
  seq: string | undefined,
): { file: string; seq: number } | undefined {
  if (!file || !/^[0-9a-f]{8}$/.test(file) || !seq || !/^(0|[1-9a-f][0-9a-f]{0,7})$/.test(seq)) return undefined
  return { file, seq: parseInt(seq, 16) }
}

/** JetStream's deduplication id: a record is the same message however often it is published. */
export function journalMsgId(id: string, file: string, seq: number): string {
  return `${id}.${file}.${seq.toString(16)}`
}

/**
 * The stream as the mirror creates it when the backend's operator has not: every record kept
 * (no limits), nothing deleted or purged through the API, publications past the limits an
 * operator may set refused rather than old records dropped.
 */
export function journalStreamConfig(id: string): Record<string, unknown> & { name: string } {
  return {
    name: journalStream(id),
    subjects: [`hem.fleet.${id}.>`],
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

// How the journal moves the enclave's anchor around each seal: to the seal before it is written
// (with the record the seal's batch follows), and to the seal alone once it is durable. Moves are
// made in order. So the files never hold a seal the anchor has not seen, and the anchor is never
// ahead of the files but by the one seal whose write did not complete (journal-anchor.ts).
//
// Builds before signed anchors kept it unsigned. Such an anchor is trusted once, at the trial boot
// of an upgrade (`migrateUnsigned`): only an owner's upload of vendor-signed firmware arms one,
// which an attacker who can write the enclave's files cannot. It must agree with the files by the
// same rules, and is then re-written signed at once and told (`migrated`, journaled by STARTUP).
// At any other boot an unsigned anchor is one anybody could have written: a tamper.

import type { JournalAnchor, JournalMedia } from '../hal/index.js'
import { anchorProblem, type FoundFiles, type JournalAnchorStore } from './journal-anchor.js'
import type { JournalLogger, JournalOptions } from './journal-options.js'
import type { Batch, SegmentWriter } from './segment-writer.js'

/** Commits a batch that ends with a seal: the anchor moved to the seal first (when kept), marked durable after. */
export async function commitSealed(
  segment: SegmentWriter,
  batch: Batch,
  anchoring: JournalAnchoring | undefined,
): Promise<void> {
  const seal = { file: segment.id, seq: batch.seq - 1, head: batch.head }
  await anchoring?.beforeSeal({ ...seal, after: { seq: segment.lastSeq, head: segment.head } })
  await segment.commit(batch)
  anchoring?.afterSeal(seal)
}

export class JournalAnchoring {
  private moves: Promise<void> = Promise.resolve()
  /** The unsigned anchor this boot re-wrote signed, if it did. */
  migrated: { file: string; seq: number } | undefined

  constructor(
    private readonly store: JournalAnchorStore,
    private readonly logger: JournalLogger | undefined,
    private readonly options: Pick<JournalOptions, 'migrateUnsignedAnchor' | 'personalised'>,
  ) {}

  /** Why the files as the boot found them do not agree with the anchor, or undefined. */
  async check(media: JournalMedia, found: FoundFiles): Promise<string | undefined> {
    let anchor: JournalAnchor | undefined
    try {
      anchor = await this.store.journalAnchor()
    } catch (err) {
      const unsigned = await this.store.unsignedJournalAnchor?.().catch(() => undefined)
      if (unsigned) return this.migrate(media, unsigned, found)
      this.logger?.warn({ err }, 'journal: the anchor could not be read')
      const why = (err as Error).message
      return `the enclave's journal anchor cannot be used (${why}): the journal cannot be shown to be whole`
    }
    if (!anchor && found.ids.length === 0 && this.options.personalised?.())
      return (
        "the journal has no file and the enclave no anchor, but the enclave holds an owner's credentials: " +
        'the journal was deleted'
      )
    return anchorProblem(media, anchor, found)
  }

  private async migrate(media: JournalMedia, unsigned: JournalAnchor, found: FoundFiles): Promise<string | undefined> {
    const what = "the enclave's journal anchor is unsigned, as builds before signed anchors kept it"
    if (!this.options.migrateUnsignedAnchor)
      return `${what}, but this is no trial boot of an upgrade: anybody could have written it`
    const problem = await anchorProblem(media, unsigned, found)
    if (problem) return `${what}, and it does not agree with the files (${problem}): not migrated`
    try {
      await this.store.setJournalAnchor(unsigned)
    } catch (err) {
      this.logger?.warn({ err }, 'journal: the unsigned anchor could not be re-written signed')
      return `${what}, and it could not be re-written signed (${(err as Error).message})`
    }
    this.migrated = { file: unsigned.file, seq: unsigned.seq }
    this.logger?.warn(this.migrated, "journal: an older build's unsigned anchor was migrated (re-written signed)")
    return undefined
  }

  /** Moves the anchor to a seal about to be written; the seal must not be written when this fails. */
  beforeSeal(anchor: JournalAnchor & { after: NonNullable<JournalAnchor['after']> }): Promise<void> {
    const move = this.moves.then(() => this.store.setJournalAnchor(anchor))
    this.moves = move.catch(() => undefined)
    return move
  }

  /** The seal is durable. Not waited for: an anchor left `after` a seal the files hold is no tamper. */
  afterSeal(anchor: { file: string; seq: number; head: Uint8Array }): void {
    this.moves = this.moves
      .then(() =>
        this.store.setJournalAnchor({ file: anchor.file, seq: anchor.seq, head: new Uint8Array(anchor.head) }),
      )
      .catch((err: unknown) => this.logger?.warn({ err }, 'journal: the anchor could not be marked durable'))
  }

  /** Resolves once every move asked for so far is done (or failed). */
  settled(): Promise<void> {
    return this.moves
  }
}

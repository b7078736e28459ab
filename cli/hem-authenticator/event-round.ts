// One poll of the cloud for events and an answer to each new one: shared by `approve` and `auto`.
import { BrokerAnswerError, type Approval, type Authenticator, type Period } from '../../authenticator/index.js'
import type { AuthenticatorIo } from './context.js'
import { printable } from './pairing-commands.js'

export type Decision = { allow: false } | { allow: true; period: Period; writable?: boolean }

const SKIPPED = {
  fatal: 'the cloud refused our proof (401)',
  expired: 'expired (404)',
  gone: 'cancelled or answered elsewhere (410)',
  refused: 'refused by the cloud',
} as const

export type Decide = (approval: Approval) => Promise<Decision>

/**
 * Polls every pairing's events once and answers each event not seen before, once, whichever of our pairings
 * it reached (a device paired twice with us sends each event to both). One line per action; no secret.
 */
export async function eventRound(
  authenticator: Authenticator,
  seen: Set<string>,
  decide: Decide,
  io: AuthenticatorIo,
): Promise<void> {
  for (const pending of await authenticator.pendingEvents()) {
    if (seen.has(pending.eventId)) continue
    seen.add(pending.eventId)
    const id = pending.eventId
    try {
      const approval = await authenticator.open(pending)
      if (!approval) {
        io.stdout.write(`ignored ${id}: expired, or its scope does not open with this pairing\n`)
        continue
      }
      const decision = await decide(approval)
      if (decision.allow) {
        await authenticator.allow(approval, decision.period, decision.writable)
        io.stdout.write(
          printable(`allowed ${id}: ${approval.opened.scope.split('#')[0]} for ${decision.period} s`) + '\n',
        )
      } else {
        await authenticator.deny(approval)
        io.stdout.write(`denied ${id}\n`)
      }
    } catch (err) {
      if (!(err instanceof BrokerAnswerError)) throw err
      if (err.kind === 'unavailable') {
        seen.delete(id) // the next round tries it again
        throw err
      }
      io.stdout.write(`skipped ${id}: ${SKIPPED[err.kind]}\n`)
    }
  }
}

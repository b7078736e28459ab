// What each fail-state bit means for the owner: who finds the fault and what clears it
// (docs/api.md, "Health and the fail state"), in words.
import { FLS } from '../../protocol/browser.js'

export interface FailBitGuide {
  foundBy: string
  clears: string
}

export const FAIL_BIT_GUIDE: Record<number, FailBitGuide> = {
  [FLS.KAT]: {
    foundBy: 'the known-answer tests of the crypto engine, at boot and in every self-test',
    clears: 'a reboot whose known-answer tests pass',
  },
  [FLS.ENTROPY]: {
    foundBy:
      'the health tests (NIST SP 800-90B repetition count and adaptive proportion) on every byte drawn, ' +
      'a draw every second, and the self-test',
    clears: 'a reboot whose start-up test of the source passes',
  },
  [FLS.TEMPERATURE]: {
    foundBy: 'the chip sensor, read every second (the range is set at start, by default -40 to 85 °C)',
    clears: 'itself, once the reading is 2 °C inside the range',
  },
  [FLS.INTEGRITY]: {
    foundBy:
      "the journal's recovery at boot, a journal history that does not verify, and the key store's check " +
      'of its records (at boot and in the self-test)',
    clears:
      'for the journal, never (the break stays in the history, for an auditor); for the key store, a wipeout, ' +
      'which erases it',
  },
  [FLS.ALLOCATION]: {
    foundBy: 'the memory above 90 % of its limit three readings in a row, or an allocation error in a service',
    clears: 'a reboot',
  },
  [FLS.STACK]: { foundBy: "a stack overflow in a service's command", clears: 'a reboot' },
  [FLS.LOCKED]: { foundBy: "the trusted backend's signed check-in reply with the action lock", clears: 'a reboot' },
  [FLS.SHUTDOWN]: {
    foundBy: "the trusted backend's signed check-in reply with the action shutdown; the device then stops",
    clears: 'the next start',
  },
}

/** What the fail state stops, and what keeps working so that the owner can see and act. */
export const GATING_WORDS =
  'While any bit is set, key management, encryption and decryption, the disks and attestation answer 409 ' +
  '(device_fault). Status, the audit log, configuration, the self-test, reboot and upgrades keep working.'

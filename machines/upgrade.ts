import { setup } from 'xstate'

export type UpgradeKind = 'fw' | 'ui'

export type UpgradeEvent =
  | { type: 'UPLOAD_STARTED' }
  | { type: 'UPLOAD_FINISHED' }
  | { type: 'UPLOAD_FAILED' }
  | { type: 'CHECK_STARTED' }
  | { type: 'CHECK_PASSED' }
  | { type: 'CHECK_FAILED' }
  | { type: 'INSTALL_STARTED' }
  | { type: 'INSTALL_FINISHED' }
  | { type: 'INSTALL_FAILED' }
  | { type: 'TRIAL_BOOT' }
  | { type: 'CONFIRMED' }
  | { type: 'ROLLED_BACK' }

/** A new upload may start from any state where nothing runs: it replaces what was staged. */
const restart = { UPLOAD_STARTED: 'receiving' } as const

/**
 * One upgrade pipeline (one actor for the firmware, one for the management app): an upload
 * streams into staging, a check verifies it before anything in it is trusted, an install
 * writes it where it runs. For the firmware the install arms a one-time trial boot of the other
 * slot: the new runtime records TRIAL_BOOT, then CONFIRMED once it is healthy; if it never is,
 * the bootloader boots the old slot again and that runtime starts by recording ROLLED_BACK. The host runs the I/O
 * and sends its outcome as an event; events carry no data, so a replay reaches the same state.
 */
export const upgradeMachine = setup({
  types: {
    input: {} as { kind: UpgradeKind },
    context: {} as { kind: UpgradeKind },
    events: {} as UpgradeEvent,
  },
}).createMachine({
  id: 'upgrade',
  context: ({ input }) => ({ kind: checkedKind(input.kind) }),
  initial: 'idle',
  states: {
    idle: { on: { ...restart, TRIAL_BOOT: 'confirming', ROLLED_BACK: 'rolled_back' } },
    confirming: { on: { CONFIRMED: 'committed' } },
    receiving: { on: { UPLOAD_FINISHED: 'uploaded', UPLOAD_FAILED: 'idle' } },
    uploaded: { on: { ...restart, CHECK_STARTED: 'checking' } },
    checking: { on: { CHECK_PASSED: 'verified', CHECK_FAILED: 'rejected' } },
    verified: { on: { ...restart, INSTALL_STARTED: 'installing' } },
    rejected: { on: restart },
    installing: { on: { INSTALL_FINISHED: 'installed', INSTALL_FAILED: 'verified' } },
    installed: { on: restart },
    committed: { on: restart },
    rolled_back: { on: restart },
  },
})

export const upgradeVersion = 1

function checkedKind(kind: unknown): UpgradeKind {
  if (kind !== 'fw' && kind !== 'ui') throw new RangeError("the upgrade kind must be 'fw' or 'ui'")
  return kind
}

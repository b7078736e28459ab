import { assign, setup } from 'xstate'

export type UpgradeKind = 'fw' | 'ui'

/** What the last check found: the install unpacks only bytes of this hash, and a downgrade only when confirmed. */
export interface VerifiedImage {
  sha256: string
  /** Why the image goes back (a firmware image at the floor, older than the running one), or false. */
  downgrade: string | false
}

export interface UpgradeContext {
  kind: UpgradeKind
  /** The image the last check passed (from CHECK_PASSED until the next upload). */
  verified?: VerifiedImage
  /** Why the last check failed, as its 406 says (from CHECK_FAILED until the next upload). */
  rejection?: string
  /** This boot is a trial of new firmware, and it confirmed its health: `status.fw_upgrade`. */
  confirmed: boolean
}

export type UpgradeEvent =
  | { type: 'UPLOAD_STARTED' }
  | { type: 'UPLOAD_FINISHED' }
  | { type: 'UPLOAD_FAILED' }
  | { type: 'CHECK_STARTED' }
  | ({ type: 'CHECK_PASSED' } & VerifiedImage)
  | { type: 'CHECK_FAILED'; rejection: string }
  | { type: 'INSTALL_STARTED'; allowDowngrade: boolean }
  | { type: 'INSTALL_FINISHED' }
  | { type: 'INSTALL_FAILED' }
  | { type: 'TRIAL_BOOT' }
  | { type: 'CONFIRMED'; fls: number }
  | { type: 'ROLLED_BACK' }

/** A new upload may start from any state where nothing runs: it replaces what was staged, and its check. */
const restart = { UPLOAD_STARTED: { target: 'receiving', actions: 'forgetCheck' } } as const

/**
 * One upgrade pipeline (one actor for the firmware, one for the management app): an upload
 * streams into staging, a check verifies it before anything in it is trusted, an install
 * writes it where it runs. For the firmware the install arms a one-time trial boot of the other
 * slot: the new runtime records TRIAL_BOOT, then CONFIRMED once it is healthy; if it never is,
 * the bootloader boots the old slot again and that runtime starts by recording ROLLED_BACK.
 *
 * The machine holds every rule of the pipeline, so the host asks it and never keeps a flag of
 * its own: `receiving` and `installing` are the busy states (the host journals UPLOAD_STARTED and
 * INSTALL_STARTED before it touches staging or a slot), the check's outcome and its data live in
 * the context, and the two owner's rules are guards: a downgrade installs only when confirmed,
 * and a trial in a fail state is not confirmed.
 *
 * TRANSITION records carry the event's type only, so a replay sends events without data. The
 * guards therefore read event data only to refuse (a recorded event was taken, and its data said
 * so), and the data-borne context (verified, rejection) decides no transition: a replay reaches
 * the same states, by the same transitions, as the version 1 machine that had no guards.
 */
export const upgradeMachine = setup({
  types: {
    input: {} as { kind: UpgradeKind },
    context: {} as UpgradeContext,
    events: {} as UpgradeEvent,
  },
  guards: {
    downgradeConfirmed: ({ context, event }) =>
      !context.verified?.downgrade || (event.type === 'INSTALL_STARTED' && event.allowDowngrade === true),
    // The host reads fls_state from the system's read model, and sends 0xff when it has none.
    healthy: ({ event }) => event.type === 'CONFIRMED' && !event.fls,
  },
  actions: {
    forgetCheck: assign({ verified: undefined, rejection: undefined }),
    passed: assign({
      verified: ({ event }) =>
        event.type === 'CHECK_PASSED' ? { sha256: event.sha256, downgrade: event.downgrade } : undefined,
    }),
    failed: assign({ rejection: ({ event }) => (event.type === 'CHECK_FAILED' ? event.rejection : undefined) }),
    confirmed: assign({ confirmed: true }),
  },
}).createMachine({
  id: 'upgrade',
  context: ({ input }) => ({ kind: checkedKind(input.kind), confirmed: false }),
  initial: 'idle',
  states: {
    idle: { on: { ...restart, TRIAL_BOOT: 'confirming', ROLLED_BACK: 'rolled_back' } },
    confirming: { on: { CONFIRMED: { guard: 'healthy', target: 'committed', actions: 'confirmed' } } },
    receiving: { on: { UPLOAD_FINISHED: 'uploaded', UPLOAD_FAILED: 'idle' } },
    uploaded: { on: { ...restart, CHECK_STARTED: 'checking' } },
    checking: {
      on: {
        CHECK_PASSED: { target: 'verified', actions: 'passed' },
        CHECK_FAILED: { target: 'rejected', actions: 'failed' },
      },
    },
    verified: { on: { ...restart, INSTALL_STARTED: { guard: 'downgradeConfirmed', target: 'installing' } } },
    rejected: { on: restart },
    installing: { on: { INSTALL_FINISHED: 'installed', INSTALL_FAILED: 'verified' } },
    installed: { on: restart },
    committed: { on: restart },
    rolled_back: { on: restart },
  },
})

/**
 * Still 1: the guards and the context came without a new state, transition or event, so every
 * record version 1 wrote is one this machine takes (test/upgrade-machine.test.ts holds the table).
 */
export const upgradeVersion = 1

function checkedKind(kind: unknown): UpgradeKind {
  if (kind !== 'fw' && kind !== 'ui') throw new RangeError("the upgrade kind must be 'fw' or 'ui'")
  return kind
}

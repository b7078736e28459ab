import { setup } from 'xstate'
import type { Variant } from '../protocol/index.js'

/**
 * Whether the device has been given its owner: fresh -> (P: formatting its disks) ->
 * personalised, by a personalisation or by a restore from a backup (RESTORE, the same way); a
 * wipeout returns it to fresh (from any state). A new Disk 0 size (P) formats the disks again:
 * REFORMAT leads back to `formatting`, which a boot finds unfinished after a power cut or a stop
 * and starts again, so the disks never stay half formatted. Events carry no data: the
 * event type alone decides, so a replay of the journal's transition records reaches the same state.
 */
export const personalisationMachine = setup({
  types: {
    input: {} as { variant: Variant },
    context: {} as { variant: Variant },
    events: {} as
      | { type: 'PERSONALISE' }
      | { type: 'RESTORE' }
      | { type: 'FORMAT_DONE' }
      | { type: 'REFORMAT' }
      | { type: 'WIPEOUT' },
  },
  guards: {
    hasDisks: ({ context }) => context.variant === 'P',
  },
}).createMachine({
  id: 'personalisation',
  context: ({ input }) => ({ variant: input.variant }),
  initial: 'fresh',
  states: {
    fresh: {
      on: {
        PERSONALISE: [{ guard: 'hasDisks', target: 'formatting' }, { target: 'personalised' }],
        // A restore from a backup (docs/backup.md) gives the device its owner as a personalisation does.
        RESTORE: [{ guard: 'hasDisks', target: 'formatting' }, { target: 'personalised' }],
        // Taken, and a no-op: a device whose journal lost its personalisation still holds the
        // owner's keys in the enclave, and the owner may wipe them out (no TRANSITION is recorded).
        WIPEOUT: 'fresh',
      },
    },
    formatting: { on: { FORMAT_DONE: 'personalised', WIPEOUT: 'fresh' } },
    personalised: { on: { REFORMAT: { guard: 'hasDisks', target: 'formatting' }, WIPEOUT: 'fresh' } },
  },
})

// Still 1: REFORMAT and RESTORE only add transitions, so every journal written before them replays as it did (a
// version bump would make this runtime refuse those journals: TransitionFold folds one version).
export const personalisationVersion = 1

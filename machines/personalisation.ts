import { setup } from 'xstate'
import type { Variant } from '../protocol/index.js'

/**
 * Whether the device has been given its owner: fresh -> (P: formatting its disks) ->
 * personalised; a wipeout returns it to fresh (from any state). A new Disk 0 size (P) formats the
 * disks again: REFORMAT leads back to `formatting`, which a boot finds unfinished after a power cut
 * or a stop and starts again, so the disks never stay half formatted. Events carry no data: the
 * event type alone decides, so a replay of the journal's transition records reaches the same state.
 */
export const personalisationMachine = setup({
  types: {
    input: {} as { variant: Variant },
    context: {} as { variant: Variant },
    events: {} as { type: 'PERSONALISE' } | { type: 'FORMAT_DONE' } | { type: 'REFORMAT' } | { type: 'WIPEOUT' },
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
        // Taken, and a no-op: a device whose journal lost its personalisation still holds the
        // owner's keys in the enclave, and the owner may wipe them out (no TRANSITION is recorded).
        WIPEOUT: 'fresh',
      },
    },
    formatting: { on: { FORMAT_DONE: 'personalised', WIPEOUT: 'fresh' } },
    personalised: { on: { REFORMAT: { guard: 'hasDisks', target: 'formatting' }, WIPEOUT: 'fresh' } },
  },
})

// Still 1: REFORMAT only adds a transition, so every journal written before it replays as it did.
export const personalisationVersion = 1

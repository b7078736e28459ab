import { setup } from 'xstate'

export type KeyEvent =
  | { type: 'ADD' }
  | { type: 'ADD_FAILED' }
  | { type: 'UPDATE' }
  | { type: 'RETIRE' }
  | { type: 'DELETE' }
  | { type: 'RESTORE' }
  | { type: 'INVALIDATED' }
  | { type: 'BOOT' }

/** The tag of the one state in which a key serves: crypto operations, get, update and delete. */
export const IN_SERVICE = 'in-service'

/**
 * One stored key (one instance per KID). A key is `created` once its KID is chosen; ADD is
 * journaled with its KEY_GENERATION, KEY_IMPORT or KEY_DERIVE record before the slot is written,
 * and ADD_FAILED with the record's ERROR twin when the write fails (the key never was). A deletion
 * takes the key out of service first (RETIRE), so that no operation overlapping it uses the key
 * once KEY_DELETE can be in the journal; DELETE is journaled with KEY_DELETE, RESTORE puts it back
 * when the journal refuses that record. An integrity check that finds its slot altered makes it
 * invalid for good (only a wipeout, which ends every instance, clears it). At a power-up (BOOT) a
 * deletion never journaled did not happen: the key is still stored, and serves. A key in a final
 * state is gone: its KID may name a new key (the same public key imported again).
 */
export const keyLifecycleMachine = setup({
  types: {
    events: {} as KeyEvent,
  },
}).createMachine({
  id: 'key',
  initial: 'created',
  states: {
    created: { on: { ADD: 'in_service' } },
    in_service: {
      tags: [IN_SERVICE],
      on: {
        UPDATE: 'in_service',
        ADD_FAILED: 'deleted',
        RETIRE: 'deleting',
        INVALIDATED: 'invalid',
        BOOT: 'in_service',
      },
    },
    deleting: { on: { DELETE: 'deleted', RESTORE: 'in_service', BOOT: 'in_service' } },
    deleted: { type: 'final' },
    invalid: {},
  },
})

export const keyLifecycleVersion = 1

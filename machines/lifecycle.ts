import { setup } from 'xstate'

/**
 * The run of one boot: replaying it tells a clean stop (`stopped`) from a crash (a boot that
 * never left `running`).
 */
export const lifecycleMachine = setup({
  types: {
    events: {} as { type: 'READY' } | { type: 'STOP' } | { type: 'FAULT' },
  },
}).createMachine({
  id: 'lifecycle',
  initial: 'booting',
  states: {
    booting: { on: { READY: 'running', FAULT: 'failed', STOP: 'stopped' } },
    running: { on: { STOP: 'stopped', FAULT: 'failed' } },
    failed: { on: { STOP: 'stopped' } },
    stopped: { type: 'final' },
  },
})

export const lifecycleVersion = 1

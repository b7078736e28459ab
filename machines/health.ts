import { assign, setup } from 'xstate'
import { FAULT_EVENTS, FLS, type FaultEventType } from '../protocol/index.js'

export type HealthEvent =
  { type: FaultEventType } | { type: 'TEMPERATURE_IN_RANGE' } | { type: 'CHECKIN_LOCK' } | { type: 'CHECKIN_SHUTDOWN' }

/**
 * The only bit that clears by itself: the temperature, once back in range. Every other fault
 * holds until a reboot runs the start-up tests again (and a key repository that does not verify
 * fails them again until a wipeout erases it).
 */
export const SELF_CLEARING = FLS.TEMPERATURE

/** Faults raise their bit (once); to `target` when the device was secure, else staying where it is. */
function faults(target?: 'failed') {
  return Object.fromEntries(
    Object.entries(FAULT_EVENTS).map(([type, bit]) => [
      type,
      {
        guard: { type: 'isNew', params: { bit } },
        actions: { type: 'raise', params: { bit } },
        ...(target ? { target } : {}),
      } as const,
    ]),
  ) as Record<
    FaultEventType,
    { guard: { type: 'isNew'; params: { bit: number } }; actions: { type: 'raise'; params: { bit: number } } }
  >
}

const raiseBit = (bit: number) => ({ type: 'raise', params: { bit } }) as const

/**
 * `fls_state` as a machine: `secure` (0), `failed` (some fault bits), and the two states a
 * trusted check-in orders, `locked` (0x40) and `shut_down` (0x80), which only a reboot leaves.
 */
export const healthMachine = setup({
  types: {
    context: {} as { fls: number },
    events: {} as HealthEvent,
  },
  guards: {
    isNew: ({ context }, params: { bit: number }) => (context.fls & params.bit) === 0,
    temperatureRaised: ({ context }) => (context.fls & FLS.TEMPERATURE) !== 0,
    onlyTemperature: ({ context }) => context.fls === FLS.TEMPERATURE,
  },
  actions: {
    raise: assign({ fls: ({ context }, params: { bit: number }) => context.fls | params.bit }),
    clearTemperature: assign({ fls: ({ context }) => context.fls & ~FLS.TEMPERATURE }),
  },
}).createMachine({
  id: 'health',
  context: { fls: 0 },
  initial: 'secure',
  states: {
    secure: {
      on: {
        ...faults('failed'),
        CHECKIN_LOCK: { target: 'locked', actions: raiseBit(FLS.LOCKED) },
        CHECKIN_SHUTDOWN: { target: 'shut_down', actions: raiseBit(FLS.SHUTDOWN) },
      },
    },
    failed: {
      on: {
        ...faults(),
        TEMPERATURE_IN_RANGE: [
          { guard: 'onlyTemperature', target: 'secure', actions: 'clearTemperature' },
          { guard: 'temperatureRaised', actions: 'clearTemperature' },
        ],
        CHECKIN_LOCK: { target: 'locked', actions: raiseBit(FLS.LOCKED) },
        CHECKIN_SHUTDOWN: { target: 'shut_down', actions: raiseBit(FLS.SHUTDOWN) },
      },
    },
    locked: {
      on: {
        ...faults(),
        TEMPERATURE_IN_RANGE: { guard: 'temperatureRaised', actions: 'clearTemperature' },
        CHECKIN_SHUTDOWN: { target: 'shut_down', actions: raiseBit(FLS.SHUTDOWN) },
      },
    },
    shut_down: {
      on: {
        ...faults(),
        TEMPERATURE_IN_RANGE: { guard: 'temperatureRaised', actions: 'clearTemperature' },
      },
    },
  },
})

export const healthVersion = 1

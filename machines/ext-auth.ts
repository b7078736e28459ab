import { setup } from 'xstate'

/** What a challenge of the external authenticator is for: a pairing (`ext/init`) or an approval (`ext/request`). */
export type ExtAuthKind = 'pairing' | 'approval'

export type ExtAuthEvent = { type: 'PAIRED' } | { type: 'GRANTED' } | { type: 'REFUSED' } | { type: 'EXPIRED' }

/**
 * One challenge the device gave an external authenticator (one instance per `jti`, ext-auth contract §1.1, §1.4):
 * `issued` until the authenticator's signed answer comes back, then used once and for good. A pairing's answer pairs
 * (`ext/validate`), an approval's grants a bearer (`ext/token`); neither can stand for the other. An answer whose
 * signature holds but which the device refuses (the key is paired already, eight pairings; a scope other than the
 * one asked) spends the challenge too: the authenticator answered, and a jti is good once. A challenge past its
 * time is `expired`, whatever comes. Per boot and never journaled: an unauthenticated flood of `ext/request` must
 * cost no journal write, and the challenges die at a reboot anyway; the outcomes that matter are journaled by the
 * auth actor as the contract's records (§1.7).
 */
export const extAuthMachine = setup({
  types: {
    context: {} as { kind: ExtAuthKind },
    input: {} as { kind: ExtAuthKind },
    events: {} as ExtAuthEvent,
  },
  guards: {
    pairing: ({ context }) => context.kind === 'pairing',
    approval: ({ context }) => context.kind === 'approval',
  },
}).createMachine({
  id: 'extAuth',
  context: ({ input }) => ({ kind: input.kind }),
  initial: 'issued',
  states: {
    issued: {
      on: {
        PAIRED: { guard: 'pairing', target: 'paired' },
        GRANTED: { guard: 'approval', target: 'granted' },
        REFUSED: 'refused',
        EXPIRED: 'expired',
      },
    },
    paired: { type: 'final' },
    granted: { type: 'final' },
    refused: { type: 'final' },
    expired: { type: 'final' },
  },
})

export const extAuthVersion = 1

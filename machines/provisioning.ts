import { setup } from 'xstate'

/** Factory provisioning of the secure enclave (P): once, and never again. */
export const provisioningMachine = setup({
  types: { events: {} as { type: 'PROVISION' } },
}).createMachine({
  id: 'provisioning',
  initial: 'unprovisioned',
  states: {
    unprovisioned: { on: { PROVISION: 'provisioned' } },
    provisioned: {},
  },
})

export const provisioningVersion = 1

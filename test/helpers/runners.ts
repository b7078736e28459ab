import type { JournalPort } from '../../actors/host/journal-port.js'
import { MachineRunner } from '../../actors/host/machine-runner.js'
import { personalisationMachine, personalisationVersion } from '../../machines/personalisation.js'

/** A P device's personalisation machine, fresh, journaling to `journal`. */
export function personalisationRunner(journal: JournalPort): MachineRunner<typeof personalisationMachine> {
  return new MachineRunner({ machine: personalisationMachine, version: personalisationVersion }, journal, undefined, {
    variant: 'P',
  })
}

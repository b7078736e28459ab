// The public face of actors/host/: what other folders may use of it.
export { EventRefusedError } from './event-refused-error.js'
export type { JournalPort, JournalStatus } from './journal-port.js'
export { journalSubject } from './journal-subject.js'
export { MachineRunner } from './machine-runner.js'
export { scopeCheckEntry } from './scope-check-entry.js'
export { BearerGuard, type Admission, type BearerGuardOptions } from './bearer-guard.js'

import type { Logger } from 'pino'
import { Journal } from '../eventstore/index.js'
import type { Hal } from '../hal/index.js'

/** The device's journal, recovered and open for appends; `prefetchChecks` when this process reads the history next. */
export function openDeviceJournal(
  hal: Hal,
  firmwareVersion: string,
  logger: Logger,
  prefetchChecks: boolean,
): Promise<Journal> {
  return Journal.open({
    media: hal.journal,
    signer: hal.enclave.logSigner,
    clock: hal.clock,
    random: (n) => hal.entropy.read(n),
    banner: `# hemd ${firmwareVersion} journal {id} devid ${hal.devid} variant ${hal.variant}`,
    logger,
    prefetchChecks,
    anchor: hal.enclave,
    migrateUnsignedAnchor: hal.boot.trial,
    personalised: () => hal.enclave.credentials() !== undefined,
  })
}

import { chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { prepareDataDirAccess, type Hal } from '../hal/index.js'
import type { NatsUserCredentials } from '../bus/index.js'
import { deviceServices, type DeviceService } from './run-service.js'
import { type ServiceAccount, uidSeparation, type UidSeparation } from './service-accounts.js'
import { type ServiceChildConfig, serviceChildConfig } from './service-child-config.js'
import { startServiceProcess } from './service-process.js'
import { ServiceSupervision } from './service-supervision.js'
import type { DeviceOptions, StartedServices } from './types.js'

/**
 * Starts every service in its own process, in order, each only when the one before is ready.
 * A service process that dies unasked is started again on its own, with the same configuration
 * and the gateway on the ports it had: what it acknowledged is in the journal and its media, from
 * which it rebuilds its state as at boot. `onGiveUp` is told when one keeps crashing.
 */
export async function startSplitServices(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  credentials: ReadonlyMap<string, NatsUserCredentials> | undefined,
  tls: { certFile: string; keyFile: string } | undefined,
  onGiveUp: (service: DeviceService) => void = () => undefined,
): Promise<StartedServices> {
  const separation = await separateServices(o, hal)
  const accountOf = (service: DeviceService) => (separation.separate ? separation.accounts.get(service) : undefined)
  const restart = async (config: ServiceChildConfig) => {
    // What the services wrote since the boot is each one's own alone: make it readable again by those that need it.
    if (separation.separate) await prepareDataDirAccess(o.dataDir, separation.dataDir, hal.variant)
    return startServiceProcess(config, accountOf(config.service))
  }
  const supervision = new ServiceSupervision(o.logger, restart, onGiveUp)
  let ports: { httpPort?: number; httpsPort?: number } = {}
  try {
    for (const service of deviceServices) {
      const gatewayTls = service === 'gateway' ? await gatewayFiles(hal, tls, separation) : undefined
      const config = serviceChildConfig(service, o, hal, natsUrl, credentials, gatewayTls)
      const { child, ready } = await startServiceProcess(config, accountOf(service))
      if (service === 'gateway') {
        ports = ready
        // A restarted gateway comes back where the clients are.
        if (config.http && ready.httpPort !== undefined) config.http = { ...config.http, port: ready.httpPort }
        if (config.https && ready.httpsPort !== undefined) config.https = { ...config.https, port: ready.httpsPort }
      }
      supervision.supervise(config, child)
    }
  } catch (err) {
    await supervision.stop()
    throw err
  }
  return {
    httpPort: ports.httpPort,
    httpsPort: ports.httpsPort,
    stop: () => supervision.stop(),
    uidSeparation: separation.separate ? 'on' : separation.reason,
  }
}

/**
 * Who the services run as. When each is its own user, the data dir is made theirs before the
 * first starts: walked once for the whole boot, since a service writes at its start nothing that
 * one started after it reads (the gateway's TLS files are copied for it below).
 */
async function separateServices(o: DeviceOptions, hal: Hal): Promise<UidSeparation> {
  const separation = await uidSeparation(o.serviceUids)
  if (separation.separate) {
    await searchableByAll(o.dataDir)
    await makeSealingKeys(hal)
    await prepareDataDirAccess(o.dataDir, separation.dataDir, hal.variant)
  } else {
    o.logger.warn(
      { reason: separation.reason },
      'no uid separation: every service process runs as this user and can read every file of the device',
    )
  }
  return separation
}

/**
 * The files the gateway serves (it opens no enclave), read as it starts: after auth, which erases
 * a former owner's TLS material in its own process when a wipeout did not finish.
 */
async function gatewayFiles(
  hal: Hal,
  tls: { certFile: string; keyFile: string } | undefined,
  separation: UidSeparation,
): Promise<{ certFile: string; keyFile: string }> {
  if (!tls) await hal.enclave.activateStagedTls()
  if (separation.separate) return gatewayTls(hal, tls, separation.accounts.get('gateway')!)
  const { certFile, keyFile } = tls ?? hal.enclave.tlsCredentials()
  return { certFile, keyFile }
}

/**
 * The enclave makes a sealing key on first use, as the process that seals first: here, before
 * any service runs, so that each key belongs to its service from the start (the disks' key is
 * first used by auth, which formats the disks, but it is the storage's).
 */
async function makeSealingKeys(hal: Hal): Promise<void> {
  const purposes = hal.disks ? (['keys', 'backup', 'disks'] as const) : (['keys', 'backup'] as const)
  for (const purpose of purposes) await hal.enclave.sealer(purpose).seal(new Uint8Array(0), new Uint8Array(0))
}

/** Service users reach the data dir only if every directory above it lets others through. */
async function searchableByAll(dataDir: string): Promise<void> {
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0)
      throw new SplitServicesError(`the service users cannot reach the data dir: ${dir} is not searchable by others`)
    if (dir === dirname(dir)) return
  }
}

/**
 * The certificate and key the gateway serves, copied where only the gateway's user reads them:
 * the enclave (the device's own pair) and an operator's files are not the gateway's to open.
 */
async function gatewayTls(
  hal: Hal,
  tls: { certFile: string; keyFile: string } | undefined,
  gateway: ServiceAccount,
): Promise<{ certFile: string; keyFile: string }> {
  const source = tls ?? hal.enclave.tlsCredentials()
  const dir = join(hal.runDir, 'gateway-tls')
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { mode: 0o700 })
  const copy = { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') }
  await writeFile(copy.certFile, await readFile(source.certFile), { mode: 0o600 })
  await writeFile(copy.keyFile, await readFile(source.keyFile), { mode: 0o600 })
  for (const path of [dir, copy.certFile, copy.keyFile]) await chown(path, gateway.uid, gateway.gid)
  return copy
}

export class SplitServicesError extends Error {
  override readonly name = 'SplitServicesError'
}

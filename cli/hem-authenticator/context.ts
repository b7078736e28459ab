// What the hem-authenticator commands share: their io, the store and cloud options, the core they build.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type CliIo, type PassphraseSources, readPassphrase, UsageError } from '../index.js'
import { Authenticator, NobleKeys, type PairingStore, type Sealer } from '../../authenticator/index.js'
import { checkedUrl, CloudUrlError, httpsTransport } from './https-transport.js'
import { PairingFile } from './pairing-file.js'

export interface AuthenticatorIo extends CliIo, PassphraseSources {
  /** A line typed on the terminal (a consent, a choice); undefined when there is none to ask on. */
  ask(question: string): Promise<string | undefined>
  /** Stops the commands that run until a signal (`approve`, `auto`); the process's SIGINT/SIGTERM when absent. */
  stop?: AbortSignal
}

export const PASSPHRASE_VARIABLE = 'HEM_AUTHENTICATOR_PASSPHRASE'

export const storeOptions = {
  store: { type: 'string' },
  'passphrase-file': { type: 'string' },
  ca: { type: 'string' },
} as const

export const STORE_USAGE = `  --store FILE            the pairing store (default
                          $XDG_CONFIG_HOME/hem-authenticator/pairings.json)
  --passphrase-file FILE  the store's passphrase (else $${PASSPHRASE_VARIABLE}, else asked)
  --ca FILE               trust this CA (PEM) for the cloud's certificate
  -h, --help              show this help`

export interface StoreValues {
  store?: string | undefined
  'passphrase-file'?: string | undefined
  ca?: string | undefined
}

/** The pairing store the options name, opened with its passphrase. */
export async function openPairingFile(values: StoreValues, io: AuthenticatorIo): Promise<PairingFile> {
  const path = values.store ?? defaultStorePath(io.env)
  const passphrase = await readPassphrase(io, PASSPHRASE_VARIABLE, values['passphrase-file'], 'Store passphrase: ')
  return PairingFile.open(path, passphrase)
}

/** The core over node's https, the process's randomness and clock, noble's crypto over the sealer's keys. */
export async function authenticatorOn(
  store: PairingStore<string>,
  sealer: Sealer,
  ca: string | undefined,
  label: string = DEFAULT_LABEL,
): Promise<Authenticator<string>> {
  const caText = ca === undefined ? undefined : await readFile(ca, 'utf8').catch((err: Error) => usage(err.message))
  const random = (length: number) => new Uint8Array(randomBytes(length))
  return new Authenticator({
    transport: httpsTransport(caText),
    store,
    keys: new NobleKeys(sealer, random),
    random,
    now: () => Math.floor(Date.now() / 1000),
    sleep: (ms) => sleep(ms),
    label,
  })
}

/** The pairing's name on the device, as the app's `<model> (<platform>)`. */
export const DEFAULT_LABEL = `hem-authenticator (${process.platform})`

/** A cloud URL from the command line, without a trailing slash; a usage error when it is not one we call. */
export function cloudBase(text: string): string {
  try {
    return checkedUrl(text).href.replace(/\/+$/, '')
  } catch (err) {
    if (err instanceof CloudUrlError) throw new UsageError(err.message)
    throw err
  }
}

export function defaultStorePath(env: Record<string, string | undefined>): string {
  const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return join(config, 'hem-authenticator', 'pairings.json')
}

/** Resolves when the io's stop signal fires, or the process gets SIGINT or SIGTERM. */
export function stopSignal(io: AuthenticatorIo): AbortSignal {
  if (io.stop) return io.stop
  const controller = new AbortController()
  const stop = () => controller.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return controller.signal
}

/** Waits `ms`, or less when `signal` fires. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal }).catch(() => undefined)
}

function usage(message: string): never {
  throw new UsageError(`cannot read the CA file: ${message}`)
}

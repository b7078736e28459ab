/** One pairing as the authenticator shows it (contract §4): nothing secret. */
export interface StoredPairing {
  pid: string
  eid: string
  aid: string
  label: string
  user?: string
  email?: string
  hostname?: string
  /** The broker's base URL, without `/notify/…`. */
  baseUrl: string
  /** Unix seconds. */
  created: number
}

/** A pairing with its `aid_prv` as its key provider keeps it: a sealed text (CLI), a CryptoKey (web). */
export interface PairingRecord<H> extends StoredPairing {
  aidKey: H
}

/** Where pairings live: a passphrase-sealed file for the CLI, IndexedDB for the web page. */
export interface PairingStore<H> {
  list(): Promise<PairingRecord<H>[]>
  add(pairing: PairingRecord<H>): Promise<void>
  remove(pid: string): Promise<void>
}

/** Seals the CLI's raw `aid_prv` at rest; `open` throws when the sealed text was not made by this sealer's key. */
export interface Sealer {
  seal(secret: Uint8Array): Promise<string>
  open(sealed: string): Promise<Uint8Array>
}

/** Pairings for one process's life (the automatic mode, tests): nothing is written anywhere. */
export class MemoryPairingStore<H> implements PairingStore<H> {
  private readonly pairings = new Map<string, PairingRecord<H>>()

  list(): Promise<PairingRecord<H>[]> {
    return Promise.resolve([...this.pairings.values()])
  }

  add(pairing: PairingRecord<H>): Promise<void> {
    this.pairings.set(pairing.pid, pairing)
    return Promise.resolve()
  }

  remove(pid: string): Promise<void> {
    this.pairings.delete(pid)
    return Promise.resolve()
  }
}

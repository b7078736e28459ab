/** One pairing as the authenticator keeps it (contract §4): `sealedAidPrv` is `aid_prv` as the Sealer sealed it. */
export interface StoredPairing {
  pid: string
  eid: string
  aid: string
  sealedAidPrv: string
  label: string
  user?: string
  email?: string
  hostname?: string
  /** The broker's base URL, without `/notify/…`. */
  baseUrl: string
  /** Unix seconds. */
  created: number
}

/** Where pairings live: a passphrase-sealed file for the CLI, IndexedDB for the web page. */
export interface PairingStore {
  list(): Promise<StoredPairing[]>
  add(pairing: StoredPairing): Promise<void>
  remove(pid: string): Promise<void>
}

/**
 * Seals `aid_prv` at rest: the CLI with a passphrase-derived key, the web page with a non-extractable
 * WebCrypto key. `open` throws when the sealed text was not made by this sealer's key.
 */
export interface Sealer {
  seal(secret: Uint8Array): Promise<string>
  open(sealed: string): Promise<Uint8Array>
}

/** Pairings for one process's life (the automatic mode, tests): nothing is written anywhere. */
export class MemoryPairingStore implements PairingStore {
  private readonly pairings = new Map<string, StoredPairing>()

  list(): Promise<StoredPairing[]> {
    return Promise.resolve([...this.pairings.values()])
  }

  add(pairing: StoredPairing): Promise<void> {
    this.pairings.set(pairing.pid, pairing)
    return Promise.resolve()
  }

  remove(pid: string): Promise<void> {
    this.pairings.delete(pid)
    return Promise.resolve()
  }
}

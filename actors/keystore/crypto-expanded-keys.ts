/**
 * Expanded post-quantum secret keys, per KID: a key is stored as its seed, and expanding it costs
 * milliseconds per use. An entry is wiped once its key is no longer stored (see `retain`).
 */
export class ExpandedKeys {
  readonly #keys = new Map<string, Uint8Array>()

  /** The expanded secret key of `kid`, made by `expand` on first use. Callers must not change it. */
  get(kid: string, expand: () => Uint8Array): Uint8Array {
    let key = this.#keys.get(kid)
    if (!key) this.#keys.set(kid, (key = expand()))
    return key
  }

  /** Wipes and forgets the entry of `kid`, if any. */
  drop(kid: string): void {
    this.#keys.get(kid)?.fill(0)
    this.#keys.delete(kid)
  }

  /** Wipes and forgets every entry whose key `stored` no longer holds. */
  retain(stored: (kid: string) => boolean): void {
    for (const kid of this.#keys.keys()) if (!stored(kid)) this.drop(kid)
  }
}

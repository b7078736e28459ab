import type { KeyObject } from 'node:crypto'

/**
 * Importing a key (and, for an EC private key, a scalar multiplication for its point) costs up
 * to ten times the operation, so each key is imported once and kept with the array it came in.
 * The maps are keyed by identity, not by bytes: no secret goes into a key of a map, and an entry
 * is collected with its array. That is safe because the key store keeps one array per stored
 * key for the key's life and never changes it; a caller that changes a key array in place must
 * not use it again (it would get the key it held before). One map per curve, so the same bytes
 * used on two curves give two keys.
 */
export type KeyCache<C extends string> = Record<C, WeakMap<Uint8Array, KeyObject>>

export function keyCache<C extends string>(curves: readonly C[]): KeyCache<C> {
  return Object.fromEntries(curves.map((curve) => [curve, new WeakMap()])) as KeyCache<C>
}

export function imported<C extends string>(cache: KeyCache<C>, curve: C, bytes: Uint8Array, build: () => KeyObject) {
  let key = cache[curve].get(bytes)
  if (key === undefined) {
    key = build()
    cache[curve].set(bytes, key)
  }
  return key
}

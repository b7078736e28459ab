/** `1.2.3`, `1.2.3-rc.1`, `1.2.3+build`: dotted numbers, then an optional pre-release; build data is ignored. */
const ORDERED = /^(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.+_-]*)?$/

/**
 * Whether installing `candidate` over `running` goes back: `candidate` precedes it in semantic
 * versioning's order (any number of dotted numbers, missing ones 0; a pre-release before its
 * release). Versions that cannot be ordered so (an image version may be any 32 characters) count
 * as going back unless they are the same: the owner confirms what the device cannot judge.
 */
export function versionGoesBack(candidate: string, running: string): boolean {
  if (candidate === running) return false
  const a = ORDERED.exec(candidate)
  const b = ORDERED.exec(running)
  if (!a || !b) return true
  const core = compareIdentifiers(a[1]!.split('.'), b[1]!.split('.'), true)
  if (core !== 0) return core < 0
  // Same release: a pre-release precedes it; two pre-releases compare field by field.
  if (a[2] === undefined || b[2] === undefined) return a[2] !== undefined && b[2] === undefined
  return compareIdentifiers(a[2].split('.'), b[2].split('.'), false) < 0
}

/** Field by field: numbers numerically and before words, words in ASCII order; `pad`: missing fields are 0. */
function compareIdentifiers(a: string[], b: string[], pad: boolean): number {
  const length = pad ? Math.max(a.length, b.length) : Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a[i] ?? '0'
    const y = b[i] ?? '0'
    const order = compareIdentifier(x, y)
    if (order !== 0) return order
  }
  return pad ? 0 : a.length - b.length
}

function compareIdentifier(x: string, y: string): number {
  const xNumber = /^\d+$/.test(x)
  const yNumber = /^\d+$/.test(y)
  if (xNumber && yNumber) {
    const [p, q] = [BigInt(x), BigInt(y)]
    return p < q ? -1 : p > q ? 1 : 0
  }
  if (xNumber !== yNumber) return xNumber ? -1 : 1
  return x < y ? -1 : x > y ? 1 : 0
}

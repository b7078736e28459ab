/** The DER SEQUENCEs (certificates) concatenated in `bytes`, or undefined unless they fill it exactly. */
export function splitDerChain(bytes: Uint8Array): Uint8Array[] | undefined {
  const elements: Uint8Array[] = []
  let at = 0
  while (at < bytes.length) {
    const first = bytes[at + 1]
    if (bytes[at] !== 0x30 || first === undefined) return undefined
    let header = 2
    let length = first
    if (first >= 0x80) {
      const count = first & 0x7f
      // Definite long form of at most 4 bytes: a chain is far smaller than 4 GiB.
      if (count === 0 || count > 4 || at + 2 + count > bytes.length) return undefined
      length = 0
      for (let i = 0; i < count; i++) length = length * 256 + (bytes[at + 2 + i] as number)
      header += count
    }
    const end = at + header + length
    if (end > bytes.length) return undefined
    elements.push(new Uint8Array(bytes.subarray(at, end)))
    at = end
  }
  return elements.length > 0 ? elements : undefined
}

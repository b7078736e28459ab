// A strict msgpack decoder for a journal record's data (pack-data.ts writes it with msgpackr, useRecords: false).
// msgpackr's unpacker cost the management app 15 KB of its budget, and it is lenient where a journal, which may
// have been tampered with, should not be read generously: it takes invalid UTF-8, duplicate keys, non-string keys
// and any length the input claims. This one reads the types Packr writes for the data, gives the values msgpackr
// gives, and refuses anything else, with nothing allocated before the bytes it needs are known to be there.
// No node: the app reads records with it too.

/** The input is not one msgpack value of the types journal data holds. */
export class MsgpackError extends Error {
  override name = 'MsgpackError'
}

/** Containers nested deeper than this are refused: no record nests its data more than a few levels. */
export const MAX_DEPTH = 32

// ignoreBOM keeps a leading U+FEFF as a character, as msgpackr does.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

// Ext types msgpackr knows, named in the refusal.
const EXT_NAMES: Record<number, string> = { [-1]: 'timestamp', 0x72: 'record definition' }
const FIXEXT_LENGTHS: Record<number, number> = { 0xd5: 2, 0xd6: 4, 0xd7: 8, 0xd8: 16 }

/** The one msgpack value `bytes` holds; throws MsgpackError when it is anything else or has bytes after it. */
export function decodeMsgpack(bytes: Uint8Array): unknown {
  const reader = new Reader(bytes)
  const value = reader.value(0)
  if (reader.at !== bytes.length) throw new MsgpackError(`${bytes.length - reader.at} bytes after the value`)
  return value
}

class Reader {
  at = 0
  private readonly view: DataView

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  value(depth: number): unknown {
    const token = this.u8()
    if (token <= 0x7f) return token
    if (token >= 0xe0) return token - 0x100
    if (token <= 0x8f) return this.map(token & 0x0f, depth)
    if (token <= 0x9f) return this.array(token & 0x0f, depth)
    if (token <= 0xbf) return this.string(token & 0x1f)
    switch (token) {
      case 0xc0:
        return null
      case 0xc2:
        return false
      case 0xc3:
        return true
      case 0xc4:
        return this.bin(this.u8())
      case 0xc5:
        return this.bin(this.u16())
      case 0xc6:
        return this.bin(this.u32())
      case 0xca:
        return this.view.getFloat32(this.advance(4))
      case 0xcb:
        return this.view.getFloat64(this.advance(8))
      case 0xcc:
        return this.u8()
      case 0xcd:
        return this.u16()
      case 0xce:
        return this.u32()
      // msgpackr's Unpackr gives every 64-bit int as a BigInt unless told otherwise, whatever its size.
      case 0xcf:
        return this.view.getBigUint64(this.advance(8))
      case 0xd0:
        return this.view.getInt8(this.advance(1))
      case 0xd1:
        return this.view.getInt16(this.advance(2))
      case 0xd2:
        return this.view.getInt32(this.advance(4))
      case 0xd3:
        return this.view.getBigInt64(this.advance(8))
      case 0xd4:
        return this.fixext1()
      case 0xd9:
        return this.string(this.u8())
      case 0xda:
        return this.string(this.u16())
      case 0xdb:
        return this.string(this.u32())
      case 0xdc:
        return this.array(this.u16(), depth)
      case 0xdd:
        return this.array(this.u32(), depth)
      case 0xde:
        return this.map(this.u16(), depth)
      case 0xdf:
        return this.map(this.u32(), depth)
      case 0xc7:
      case 0xc8:
      case 0xc9:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        return this.refuseExt(token)
      default:
        throw new MsgpackError(`msgpack type 0x${token.toString(16)} at offset ${this.at - 1} is never valid`)
    }
  }

  // Packr writes `undefined` as ext type 0 with a zero byte (notepack's convention, which msgpackr reads back).
  private fixext1(): undefined {
    const type = this.view.getInt8(this.advance(1))
    if (type !== 0) throw this.extError(type, 1)
    if (this.u8() !== 0) throw new MsgpackError(`undefined (ext 0) at offset ${this.at - 3} has a non-zero byte`)
    return undefined
  }

  private refuseExt(token: number): never {
    const length = token === 0xc7 ? this.u8() : token === 0xc8 ? this.u16() : token === 0xc9 ? this.u32() : 0
    throw this.extError(this.view.getInt8(this.advance(1)), FIXEXT_LENGTHS[token] ?? length)
  }

  private extError(type: number, length: number): MsgpackError {
    const name = EXT_NAMES[type] ? ` (${EXT_NAMES[type]})` : ''
    return new MsgpackError(`msgpack ext type ${type}${name} of ${length} bytes is not journal data`)
  }

  // A copy, and a plain Uint8Array even over a Buffer (whose slice would share the journal's memory).
  private bin(length: number): Uint8Array {
    return new Uint8Array(this.take(length))
  }

  private string(length: number): string {
    const start = this.at
    try {
      return utf8.decode(this.take(length))
    } catch (cause) {
      if (cause instanceof MsgpackError) throw cause
      throw new MsgpackError(`the string bytes at offset ${start} are not UTF-8`, { cause })
    }
  }

  private array(count: number, depth: number): unknown[] {
    // Each element takes a byte at least: a count beyond the bytes left is refused before anything is allocated.
    this.enter(count, 1, depth)
    const out: unknown[] = []
    for (let i = 0; i < count; i++) out.push(this.value(depth + 1))
    return out
  }

  // An Object.prototype object, as msgpackr gives; keys are strings and each is written once.
  private map(count: number, depth: number): Record<string, unknown> {
    this.enter(count, 2, depth)
    const out: Record<string, unknown> = {}
    for (let i = 0; i < count; i++) {
      const at = this.at
      const key = this.key()
      if (key === '__proto__') throw new MsgpackError(`the map key at offset ${at} is __proto__`)
      if (Object.prototype.hasOwnProperty.call(out, key)) {
        throw new MsgpackError(`the map key at offset ${at} repeats an earlier key`)
      }
      out[key] = this.value(depth + 1)
    }
    return out
  }

  private key(): string {
    const token = this.u8()
    if (token >= 0xa0 && token <= 0xbf) return this.string(token & 0x1f)
    if (token === 0xd9) return this.string(this.u8())
    if (token === 0xda) return this.string(this.u16())
    if (token === 0xdb) return this.string(this.u32())
    throw new MsgpackError(`the map key at offset ${this.at - 1} is not a string`)
  }

  private enter(count: number, minBytes: number, depth: number) {
    if (depth >= MAX_DEPTH) throw new MsgpackError(`containers nested deeper than ${MAX_DEPTH}`)
    this.need(count * minBytes)
  }

  private u8(): number {
    return this.bytes[this.advance(1)]!
  }

  private u16(): number {
    return this.view.getUint16(this.advance(2))
  }

  private u32(): number {
    return this.view.getUint32(this.advance(4))
  }

  private take(length: number): Uint8Array {
    return this.bytes.subarray(this.advance(length), this.at)
  }

  /** Moves past `length` bytes that must be there; returns where they start. */
  private advance(length: number): number {
    this.need(length)
    this.at += length
    return this.at - length
  }

  private need(length: number) {
    const left = this.bytes.length - this.at
    if (length > left) throw new MsgpackError(`${length} bytes needed at offset ${this.at}, ${left} left`)
  }
}

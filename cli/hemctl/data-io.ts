// How hemctl's data commands read their input (a file or stdin) and write their output (a file or
// stdout): raw bytes, or base64 text for what is not a message when --base64 asks for it.
import { UsageError } from '../index.js'
import { readBytes, writeBytes, type HemctlIo } from './context.js'
import { b64, fromBase64 } from './operands.js'

/** More than any request holds (2048 bytes of message, an envelope, a KEM ciphertext): stdin is not read past it. */
const MAX_INPUT = 64 * 1024

export async function readInput(io: HemctlIo, file: string | undefined): Promise<Uint8Array> {
  const tooLarge = () =>
    new UsageError(`the input is larger than ${MAX_INPUT} bytes; the device takes at most 2048 bytes at a time`)
  if (file !== undefined) {
    const bytes = await readBytes(file)
    if (bytes.length > MAX_INPUT) throw tooLarge()
    return bytes
  }
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of io.stdin) {
    length += chunk.length
    if (length > MAX_INPUT) throw tooLarge()
    chunks.push(chunk)
  }
  return new Uint8Array(Buffer.concat(chunks))
}

export async function writeOutput(io: HemctlIo, file: string | undefined, data: Uint8Array | string): Promise<void> {
  if (file !== undefined) return writeBytes(file, data)
  io.stdout.write(data)
}

/** Bytes as given (raw), or base64 text around which blank space is ignored. */
export function decodeData(data: Uint8Array, base64: boolean | undefined, what: string): Uint8Array {
  return base64 ? fromBase64(Buffer.from(data).toString('utf8').trim(), what) : data
}

/** Raw bytes, or one line of base64. */
export function encodeData(bytes: Uint8Array, base64: boolean | undefined): Uint8Array | string {
  return base64 ? `${b64(bytes)}\n` : bytes
}

import { createHash, createPrivateKey, sign, verify } from 'node:crypto'
import { ed25519PublicKey } from '../hal/index.js'
import {
  HARDWARE_BITS,
  IMAGE_MAGIC,
  type ImageHeader,
  KIND_CODES,
  MAX_PAYLOAD_BYTES,
  type ParsedHeader,
  SIGNED_BYTES,
  VERSION,
} from './parse-header.js'

export {
  HEADER_BYTES,
  IMAGE_MAGIC,
  type ImageHeader,
  type ImageKind,
  MAX_IMAGE_BYTES,
  MAX_PAYLOAD_BYTES,
  parseHeader,
  type ParsedHeader,
} from './parse-header.js'

/** Builds a signed image around `payload` with the vendor's Ed25519 private key (PEM). */
export function buildImage(
  header: Omit<ImageHeader, 'payloadLength' | 'payloadSha256'>,
  payload: Uint8Array,
  vendorKeyPem: string,
): Buffer {
  const signed = encodeSigned({
    ...header,
    payloadLength: payload.length,
    payloadSha256: createHash('sha256').update(payload).digest(),
  })
  const key = createPrivateKey(vendorKeyPem)
  // Another kind of key signs too, with a signature of another length: the header would be no image's.
  if (key.asymmetricKeyType !== 'ed25519') throw new RangeError('the vendor key must be an Ed25519 private key')
  const signature = sign(null, signed, key)
  return Buffer.concat([signed, signature, payload])
}

/** Whether the header's signature verifies under the vendor's raw 32-byte Ed25519 public key. */
export function headerSignatureValid(header: ParsedHeader, vendorPublicKey: Uint8Array): boolean {
  return verify(null, header.signed, ed25519PublicKey(vendorPublicKey), header.signature)
}

function encodeSigned(header: ImageHeader): Buffer {
  if (!VERSION.test(header.version))
    throw new RangeError(`the version must match ${VERSION}: ${JSON.stringify(header.version)}`)
  if (!Number.isInteger(header.floor) || header.floor < 0 || header.floor > 0xffffffff)
    throw new RangeError('the floor must be a u32')
  if (header.hardware.length === 0 || header.hardware.some((v) => !(v in HARDWARE_BITS)))
    throw new RangeError('the hardware must name P, E or both')
  if (header.payloadLength > MAX_PAYLOAD_BYTES)
    throw new RangeError(`the payload must be at most ${MAX_PAYLOAD_BYTES} bytes`)
  const out = Buffer.alloc(SIGNED_BYTES)
  out.set(IMAGE_MAGIC, 0)
  out[8] = KIND_CODES[header.kind]
  out[9] = header.hardware.reduce((bits, v) => bits | HARDWARE_BITS[v], 0)
  out.writeUInt32BE(header.floor, 12)
  out.write(header.version, 16, 'utf8')
  out.writeBigUInt64BE(BigInt(header.payloadLength), 48)
  Buffer.from(header.payloadSha256).copy(out, 56)
  return out
}

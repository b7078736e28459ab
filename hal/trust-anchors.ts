import { createHash, createPublicKey, X509Certificate } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { DEV_BACKEND_PUBLIC_KEY } from './sim/backend-key-dev.js'
import { DEV_FACTORY_ROOT_PEM } from './sim/factory-ca-dev.js'
import { DEV_VENDOR_PUBLIC_KEY } from './sim/vendor-key-dev.js'
import { fromPem } from './x509/pem.js'

/** The keys a device trusts, fixed per installation (on hardware: fused at manufacture). */
export interface TrustAnchors {
  /** Ed25519 public key (raw 32 bytes) of the fleet backend whose signed check-in replies the device obeys. */
  backendKey: Uint8Array
  /** Ed25519 public key (raw 32 bytes) that firmware and ui images must be signed with. */
  vendorKey: Uint8Array
  /** DER certificate of the factory CA whose provisioning a P device accepts. */
  factoryRoot: Uint8Array
}

export type TrustAnchorName = keyof TrustAnchors

/** The anchor's name as an operator writes it: the hemd and install.sh flag. */
export const TRUST_ANCHOR_FLAGS: Readonly<Record<TrustAnchorName, string>> = {
  backendKey: '--backend-key',
  vendorKey: '--vendor-key',
  factoryRoot: '--factory-ca',
}

export class TrustAnchorError extends Error {
  override readonly name = 'TrustAnchorError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The development anchors, whose private halves are published in deploy/keys/: anyone can sign
 * with them, so only `npm start` (--dev-keys) and the tests use them.
 */
export function developmentTrust(): TrustAnchors {
  return {
    backendKey: new Uint8Array(Buffer.from(DEV_BACKEND_PUBLIC_KEY, 'base64')),
    vendorKey: new Uint8Array(Buffer.from(DEV_VENDOR_PUBLIC_KEY, 'base64')),
    factoryRoot: fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!,
  }
}

/**
 * The public key an anchor holds, as SPKI DER: what identifies a key whatever certificate or file wraps it (a
 * certificate re-issued from a key carries that key still). Undefined for bytes that hold no key.
 */
export function anchorPublicKey(name: TrustAnchorName, anchor: Uint8Array): Buffer | undefined {
  try {
    const key =
      name === 'factoryRoot'
        ? new X509Certificate(Buffer.from(anchor)).publicKey
        : createPublicKey({
            key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(anchor).toString('base64url') },
            format: 'jwk',
          })
    return key.export({ type: 'spki', format: 'der' })
  } catch {
    return undefined
  }
}

let developmentKeys: [TrustAnchorName, Buffer][] | undefined

/** Which published development key `anchor` holds, if it holds one: any of the three, in whatever wrapping. */
export function developmentKeyOf(name: TrustAnchorName, anchor: Uint8Array): TrustAnchorName | undefined {
  const dev = developmentTrust()
  developmentKeys ??= (Object.keys(dev) as TrustAnchorName[]).map((devName) => [
    devName,
    anchorPublicKey(devName, dev[devName])!,
  ])
  const key = anchorPublicKey(name, anchor)
  return key && developmentKeys.find(([, devKey]) => devKey.equals(key))?.[0]
}

/** Which of `trust`'s anchors hold a published development key. */
export function developmentAnchors(trust: TrustAnchors): TrustAnchorName[] {
  return (Object.keys(TRUST_ANCHOR_FLAGS) as TrustAnchorName[]).filter(
    (name) => developmentKeyOf(name, trust[name]) !== undefined,
  )
}

/** SHA-256 of the anchor's bytes (raw key or certificate DER), hex: how the banner and install.sh name it. */
export function trustFingerprint(anchor: Uint8Array): string {
  return createHash('sha256').update(anchor).digest('hex')
}

/**
 * Reads an anchor from the operator's PEM file: an Ed25519 public key (SPKI) for the backend and
 * vendor keys, an X.509 certificate for the factory CA. A private key is refused: it has no
 * place on the device.
 */
export async function readTrustAnchor(name: TrustAnchorName, file: string): Promise<Uint8Array> {
  const flag = TRUST_ANCHOR_FLAGS[name]
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new TrustAnchorError(`${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code})`, {
      cause: err,
    })
  }
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
    throw new TrustAnchorError(`${flag} ${file} is a private key: give its public half`)
  return name === 'factoryRoot' ? certificate(flag, file, text) : ed25519Key(flag, file, text)
}

function certificate(flag: string, file: string, text: string): Uint8Array {
  const [der, ...more] = fromPem(text, 'CERTIFICATE')
  if (!der || more.length > 0) throw new TrustAnchorError(`${flag} ${file} must hold exactly one PEM certificate`)
  try {
    if (!new X509Certificate(Buffer.from(der)).ca) throw new Error('it is not a CA certificate')
  } catch (err) {
    throw new TrustAnchorError(`${flag} ${file} is not a usable CA certificate: ${(err as Error).message}`, {
      cause: err,
    })
  }
  return der
}

function ed25519Key(flag: string, file: string, text: string): Uint8Array {
  try {
    const key = createPublicKey(text)
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`it is ${key.asymmetricKeyType ?? 'no'} key`)
    return new Uint8Array(Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url'))
  } catch (err) {
    throw new TrustAnchorError(`${flag} ${file} is not an Ed25519 public key (PEM): ${(err as Error).message}`, {
      cause: err,
    })
  }
}

/** The anchors as JSON can carry them (base64), for a service process's configuration. */
export function encodeTrustAnchors(trust: TrustAnchors): Record<TrustAnchorName, string> {
  return {
    backendKey: Buffer.from(trust.backendKey).toString('base64'),
    vendorKey: Buffer.from(trust.vendorKey).toString('base64'),
    factoryRoot: Buffer.from(trust.factoryRoot).toString('base64'),
  }
}

export function decodeTrustAnchors(encoded: Record<TrustAnchorName, string>): TrustAnchors {
  const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'base64'))
  return {
    backendKey: bytes(encoded.backendKey),
    vendorKey: bytes(encoded.vendorKey),
    factoryRoot: bytes(encoded.factoryRoot),
  }
}

import { createCipheriv, createPublicKey, diffieHellman, generateKeyPairSync, randomBytes } from 'node:crypto'
import { tlsTransportKey } from '../protocol/index.js'

/**
 * The client side of `tls.key`: encrypts a PKCS#8 private key for the device whose X25519
 * identity public key is `deviceEid`. Returns the `emp` and `key` fields of POST config `tls`.
 */
export function encryptTlsKeyForDevice(keyPkcs8: Uint8Array, deviceEid: Uint8Array): { emp: string; key: string } {
  const ephemeral = generateKeyPairSync('x25519')
  const device = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(deviceEid).toString('base64url') },
    format: 'jwk',
  })
  const transportKey = tlsTransportKey(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: device }))
  const iv = randomBytes(16)
  const cipher = createCipheriv('aes-256-cbc', transportKey, iv)
  const ciphertext = Buffer.concat([cipher.update(keyPkcs8), cipher.final()])
  const emp = Buffer.from(createPublicKey(ephemeral.privateKey).export({ format: 'jwk' }).x ?? '', 'base64url')
  return { emp: emp.toString('base64'), key: `${iv.toString('base64')}.${ciphertext.toString('base64')}` }
}

// A certificate fingerprint as people compare it by eye: the way browsers and openssl print one.

/** `bytes` as uppercase hex pairs joined by colons ("3A:0F:…"). */
export function colonHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0').toUpperCase()).join(':')
}

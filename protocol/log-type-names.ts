// LOG_TYPE numbers as people read them, and back.

import { LogType } from './journal.js'

const PHRASES: Record<number, string> = {
  [LogType.KEY_INIT]: 'file key',
  [LogType.STARTUP]: 'startup',
  [LogType.REBOOT]: 'reboot ordered',
  [LogType.SHUTDOWN]: 'shutdown',
  [LogType.UPGRADE]: 'upgrade',
  [LogType.TRNG_FAILED]: 'entropy source failed',
  [LogType.TLS_ERROR]: 'TLS error',
  [LogType.SELFTEST_PASSED]: 'self-test',
  [LogType.NON_SECURE_STATE]: 'fail state changed',
  [LogType.LOGGER_LIST_LOG]: 'log list read',
  [LogType.LOGGER_DELETE_LOG]: 'log file deleted',
  [LogType.LOGGER_READ_LOG]: 'log file read',
  [LogType.FAILED_SCOPE_CHECK]: 'scope check failed',
  [LogType.AUTH_SUCCESS_INTERNAL]: 'login',
  [LogType.AUTH_SUCCESS_EXTERNAL]: 'external login',
  [LogType.AUTH_PAIRED_EXTERNAL]: 'external authenticator paired',
  [LogType.CONFIG_UPDATED]: 'config updated',
  [LogType.RTC_SET]: 'clock set',
  [LogType.KEY_GENERATION]: 'key generated',
  [LogType.KEY_DELETE]: 'key deleted',
  [LogType.KEY_IMPORT]: 'key imported',
  [LogType.KEY_USAGE_PKEY]: 'public key read',
  [LogType.KEY_INTEGRITY_ERROR]: 'key repository integrity error',
  [LogType.KEY_ATTRIBUTES_CHANGED]: 'key attributes changed',
  [LogType.KEY_DERIVE]: 'key derived',
  [LogType.DEVICE_INITED]: 'device personalised',
  [LogType.CRYPTO_HMAC_HASH]: 'HMAC computed',
  [LogType.CRYPTO_HMAC_VERIFY]: 'HMAC verified',
  [LogType.CRYPTO_EXDSA_SIGN]: 'signed',
  [LogType.CRYPTO_EXDSA_VERIFY]: 'signature verified',
  [LogType.CRYPTO_WRAP]: 'key wrapped',
  [LogType.CRYPTO_UNWRAP]: 'key unwrapped',
  [LogType.CRYPTO_ENCRYPT]: 'encrypted',
  [LogType.CRYPTO_DECRYPT]: 'decrypted',
  [LogType.CRYPTO_ECDH]: 'ECDH',
  [LogType.CRYPTO_MLKEM_ENCAPS]: 'ML-KEM encapsulated',
  [LogType.CRYPTO_MLKEM_DECAPS]: 'ML-KEM decapsulated',
  [LogType.CRYPTO_MLDSA_SIGN]: 'ML-DSA signed',
  [LogType.CRYPTO_MLDSA_VERIFY]: 'ML-DSA signature verified',
  [LogType.LINK]: 'file linked',
  [LogType.SEAL]: 'sealed',
  [LogType.TRANSITION]: 'transition',
  [LogType.DISK_FORMAT]: 'disk format',
  [LogType.WIPEOUT_ERASE]: 'wipeout erasure',
  [LogType.BACKUP]: 'backup made',
  [LogType.RESTORE]: 'restored from a backup',
  [LogType.RESTORE_KEYS]: 'keys restored',
  [LogType.BACKUP_PASSPHRASE]: 'backup passphrase set',
}

const NAMES = new Map<number, string>(Object.entries(LogType).map(([name, type]) => [type, name]))

/** The family's name (`KEY_GENERATION`), or the number in hex for a type this tool does not know. */
export function logTypeName(type: number): string {
  return NAMES.get(type) ?? `0x${type.toString(16)}`
}

/** `key generated`, or `type 0x..` for a type this tool does not know. */
export function logTypePhrase(type: number): string {
  return PHRASES[type] ?? `type 0x${type.toString(16)}`
}

/** A type by name (any case) or number (decimal or 0x hex); undefined when it is neither. */
export function parseLogType(text: string): number | undefined {
  if (/^(\d{1,5}|0x[0-9a-f]{1,4})$/i.test(text)) {
    const type = Number(text)
    return type <= 0xffff ? type : undefined
  }
  const name = text.toUpperCase()
  return Object.hasOwn(LogType, name) ? (LogType as Record<string, number>)[name] : undefined
}

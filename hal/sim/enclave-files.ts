import { createPrivateKey, type KeyObject } from 'node:crypto'
import { access, readFile } from 'node:fs/promises'
import { HalCorruptError } from '../errors.js'
import { errorCode } from './error-code.js'

export async function readPrivateKey(path: string, type: string): Promise<KeyObject> {
  const key = await readEnclaveFile(path, (pem) => createPrivateKey(pem))
  if (key.asymmetricKeyType !== type) {
    throw new HalCorruptError(`${path} holds a ${key.asymmetricKeyType} key where an ${type} key belongs`)
  }
  return key
}

export async function readEnclaveFile<T>(path: string, parse: (text: string) => T): Promise<T> {
  const value = await readOptionalEnclaveFile(path, parse)
  if (value === undefined) throw unreadable(path)
  return value
}

/** For a file whose absence is a state (not provisioned, not personalised): undefined when it does not exist. */
export async function readOptionalEnclaveFile<T>(path: string, parse: (text: string) => T): Promise<T | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined
    throw unreadable(path, err)
  }
  try {
    return parse(text)
  } catch (err) {
    throw unreadable(path, err)
  }
}

function unreadable(path: string, cause?: unknown): HalCorruptError {
  return new HalCorruptError(`enclave file ${path} is missing or unreadable; the device cannot be restored from it`, {
    cause,
  })
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return false
    throw err
  }
}

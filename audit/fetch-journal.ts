// Downloads a device's journal through its API (GET /api/logger/key, /list[/:offset], /:id),
// byte for byte, for the offline tools. The client logs in with the scope logger:get.

import { type HemClient, NotFoundError, UnexpectedAnswerError } from '../client/index.js'
import type { JournalFile } from '../protocol/index.js'

/** The device answered, but not with what a journal download needs. */
export class FetchJournalError extends Error {
  override readonly name = 'FetchJournalError'
}

const BASE64 = /^[A-Za-z0-9+/]{43}=$/

/** The log public key. */
export async function fetchLogKey(client: HemClient): Promise<Uint8Array> {
  const text: unknown = (await client.logKey())?.key
  if (typeof text !== 'string' || !BASE64.test(text)) throw new FetchJournalError('the device sent no Ed25519 log key')
  return new Uint8Array(Buffer.from(text, 'base64'))
}

/**
 * Every log file, oldest first, as stored. An E device serves neither the list nor the files
 * (404 there): that is a FetchJournalError naming it.
 */
export async function fetchLogFiles(client: HemClient): Promise<JournalFile[]> {
  let ids: string[]
  try {
    ids = await client.logFiles()
  } catch (err) {
    if (err instanceof NotFoundError)
      throw new FetchJournalError('the device lists no log files: an E device serves only its log key, not its files', {
        cause: err,
      })
    if (err instanceof UnexpectedAnswerError) throw new FetchJournalError(err.message, { cause: err })
    throw err
  }
  const files: JournalFile[] = []
  for (const id of ids) files.push({ id, bytes: new Uint8Array(await client.logFile(id)) })
  return files
}

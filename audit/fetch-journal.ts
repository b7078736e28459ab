// Downloads a device's journal through its API (GET /api/logger/key, /list[/:offset], /:id),
// byte for byte, for the offline tools. The client logs in with the scope logger:get.

import { type HemClient, NotFoundError, UnexpectedAnswerError } from '../client/index.js'
import { upToRecord } from '../eventstore/index.js'
import type { JournalFile, SignedHead } from '../protocol/index.js'
import { parseSignedHead, SignedHeadError } from './signed-head.js'

/** The device answered, but not with what a journal download needs. */
export class FetchJournalError extends Error {
  override readonly name = 'FetchJournalError'
}

const BASE64 = /^[A-Za-z0-9+/]{43}=$/

/** The log public key and the journal's signed head, as the device gives them now. */
export async function fetchLogKey(client: HemClient): Promise<{ publicKey: Uint8Array; head: SignedHead }> {
  const answer = await client.logKey()
  const text: unknown = answer?.key
  if (typeof text !== 'string' || !BASE64.test(text)) throw new FetchJournalError('the device sent no Ed25519 log key')
  try {
    return { publicKey: new Uint8Array(Buffer.from(text, 'base64')), head: parseSignedHead(answer.head) }
  } catch (err) {
    if (err instanceof SignedHeadError)
      throw new FetchJournalError(`the device sent no signed head of its journal: ${err.message}`, { cause: err })
    throw err
  }
}

/**
 * Every log file, oldest first, as stored up to `head` (fetchLogKey's), which is asked for first
 * so that the files reach it: the file of the head is cut right after the head's record, newer
 * files are left out. What the device writes after the head (this download's own LOGGER_LIST_LOG
 * and LOGGER_READ_LOG records among them) no signature covers yet: it is left for the next
 * download. Files that do not reach the head are kept whole, and the verifier names the cut. An E
 * device serves neither the list nor the files (404 there): that is a FetchJournalError naming it.
 */
export async function fetchLogFiles(client: HemClient, head: SignedHead): Promise<JournalFile[]> {
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
  for (const id of ids.filter((id) => id <= head.file))
    files.push(upToHead({ id, bytes: new Uint8Array(await client.logFile(id)) }, head))
  return files
}

/** The key, the signed head, then the files up to it: what a verification of a device's journal now takes. */
export async function fetchJournal(
  client: HemClient,
): Promise<{ publicKey: Uint8Array; head: SignedHead; files: JournalFile[] }> {
  const { publicKey, head } = await fetchLogKey(client)
  return { publicKey, head, files: await fetchLogFiles(client, head) }
}

function upToHead(file: JournalFile, head: SignedHead): JournalFile {
  return file.id === head.file ? upToRecord(file, head.seq) : file
}

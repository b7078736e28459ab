// The signed heads a mirrored stream carries, checked as an auditor would: the chain rebuilt from the messages.

import {
  chainStart,
  chainStep,
  ed25519Verifier,
  fromBase64Url,
  headMessage,
  readLines,
} from '../../eventstore/index.js'
import { FILE_HEADER, HEAD_SIG_HEADER, headerPosition, SEQ_HEADER } from '../../bus/stream-names.js'
import type { StreamApi } from '../../bus/stream-api.js'

export interface StreamHeads {
  messages: number
  /** Stream sequences of the messages that carry a signed head. */
  signed: number[]
  /** Signed heads that do not verify with the log key over the chain the stream holds. */
  bad: number[]
  /** The last message carries a signed head: every record of the stream is covered by one. */
  lastSigned: boolean
}

export async function streamHeads(api: StreamApi, stream: string, logKey: Uint8Array): Promise<StreamHeads> {
  const verify = ed25519Verifier(logKey)
  const info = (await api.info(stream))!
  const result: StreamHeads = { messages: 0, signed: [], bad: [], lastSigned: false }
  let file = ''
  let chain: Uint8Array = new Uint8Array(0)
  for await (const message of api.messages(stream, info.firstSeq, info.lastSeq)) {
    result.messages++
    const at = headerPosition(message.headers?.get(FILE_HEADER), message.headers?.get(SEQ_HEADER))!
    if (at.file !== file) [file, chain] = [at.file, chainStart(at.file)]
    for (const line of readLines(message.data)) chain = chainStep(chain, line.bytes)
    const signature = message.headers?.get(HEAD_SIG_HEADER)
    result.lastSigned = Boolean(signature)
    if (!signature) continue
    result.signed.push(message.seq)
    const bytes = fromBase64Url(signature)
    if (!bytes || !verify(headMessage(at.file, at.seq, chain), bytes)) result.bad.push(message.seq)
  }
  return result
}

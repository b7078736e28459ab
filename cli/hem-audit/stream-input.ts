// hem-audit's input straight from a device's stream on the fleet backend: the journal files are
// rebuilt from the messages (one record each, in order), so the offline commands verify and
// replay them unchanged. What is wrong with the stream itself (a message missing, a record twice
// or out of order) is named by its stream sequence and the file:seq it holds. The newest batch's
// signature (the Hem-Head-Sig header on its last message) is what covers the records after the
// last seal: the verifier checks it like a signed head given with --head.

import { connect, type NatsConnection } from '@nats-io/transport-node'
import { UsageError } from '../index.js'
import { streamGeneration } from '../index.js'
import { AuditFinding, usage } from './audit-finding.js'
import { type Environment, type InputValues } from './input-values.js'
import {
  FILE_HEADER,
  HEAD_SIG_HEADER,
  headerPosition,
  journalStream,
  journalStreamId,
  SEQ_HEADER,
  StreamApi,
  StreamApiError,
} from '../../bus/index.js'
import { fromBase64Url, type HeadClaim } from '../../eventstore/index.js'
import type { JournalFile } from '../../protocol/index.js'

export interface StreamFiles {
  files: JournalFile[]
  names: Map<string, string>
  /** The newest batch signature of the stream, if any message carries one. */
  heads: HeadClaim[]
}

export interface StreamSource {
  /** The backend's client URL, nats:// or tls://. */
  url: string
  devid: string
  /** Which of the device's streams (`--stream-generation`, bus/stream-names.ts journalStreamId); default 1. */
  generation?: number
  /** The backend's JetStream domain, when not the one of the server connected to. */
  domain?: string
  auth?: { user: string; pass: string } | { token: string }
  /** A PEM file: the CA a tls:// backend's certificate is checked against instead of the system's. */
  tlsCa?: string
}

/** Reads the device's stream and rebuilds its journal files. */
export async function loadStreamFiles(source: StreamSource): Promise<StreamFiles> {
  if (!/^(nats|tls):\/\/\S+$/.test(source.url)) usage(`--stream must be a nats:// or tls:// URL`)
  if (!/^[0-9a-f]{16}$/.test(source.devid)) usage('--device must be the devid: 16 lowercase hex chars')
  let nc: NatsConnection
  try {
    nc = await connect({
      servers: source.url,
      name: 'hem-audit',
      maxReconnectAttempts: 0,
      ...source.auth,
      ...(source.tlsCa !== undefined ? { tls: { caFile: source.tlsCa } } : {}),
    })
  } catch (err) {
    throw new AuditFinding(`cannot reach ${source.url}: ${(err as Error).message}`, { cause: err })
  }
  try {
    return await readStream(new StreamApi(nc, source.domain), journalStreamId(source.devid, source.generation))
  } catch (err) {
    if (err instanceof StreamApiError) throw new AuditFinding(`cannot read the stream: ${err.message}`, { cause: err })
    throw err
  } finally {
    await nc.close()
  }
}

async function readStream(api: StreamApi, streamId: string): Promise<StreamFiles> {
  const stream = journalStream(streamId)
  const state = await api.info(stream)
  if (!state) throw new AuditFinding(`there is no stream ${stream}`)
  if (state.messages === 0) throw new AuditFinding(`the stream ${stream} is empty`)
  const parts = new Map<string, Uint8Array[]>()
  let previous: { file: string; seq: number; at: number } | undefined
  const missing = (at: number) =>
    new AuditFinding(
      `${stream} message ${at}: missing (deleted from the stream)` +
        (previous ? `, after ${previous.file}:seq ${previous.seq.toString(16)}` : ''),
    )
  let expected = state.firstSeq
  let signed: HeadClaim | undefined
  for await (const message of api.messages(stream, state.firstSeq, state.lastSeq)) {
    const at = message.seq
    if (at !== expected) throw missing(expected)
    expected = at + 1
    const where = `${stream} message ${at}`
    const position = headerPosition(message.headers?.get(FILE_HEADER), message.headers?.get(SEQ_HEADER))
    if (!position) throw new AuditFinding(`${where}: names no journal record (${FILE_HEADER}, ${SEQ_HEADER} headers)`)
    const record = `${position.file}:seq ${position.seq.toString(16)}`
    if (
      previous &&
      (position.file < previous.file || (position.file === previous.file && position.seq <= previous.seq))
    ) {
      const what = position.file === previous.file && position.seq === previous.seq ? 'a second time' : 'out of order'
      throw new AuditFinding(
        `${where}: ${record} ${what}, after message ${previous.at} (${previous.file}:seq ${previous.seq.toString(16)})`,
      )
    }
    const next = previous?.file === position.file ? previous.seq + 1 : 0
    // A file's first records may predate the stream (older files
    // deleted before mirroring began): the verifier names that gap.
    if (previous?.file === position.file && position.seq !== next) {
      throw new AuditFinding(
        `${where}: ${record} follows ${previous.file}:seq ${previous.seq.toString(16)}: ` +
          `seq ${next.toString(16)} is missing`,
      )
    }
    let list = parts.get(position.file)
    if (!list) parts.set(position.file, (list = []))
    list.push(message.data)
    previous = { ...position, at }
    // Only the newest signature counts: the ones before it cover records its own signature covers too.
    const sig = message.headers?.get(HEAD_SIG_HEADER)
    if (sig) signed = { ...position, sig: fromBase64Url(sig) ?? new Uint8Array(), source: `the signature of ${where}` }
  }
  if (expected <= state.lastSeq) throw missing(expected)
  const files = [...parts].map(([id, chunks]) => ({ id, bytes: new Uint8Array(Buffer.concat(chunks)) }))
  return {
    files,
    names: new Map(files.map((file) => [file.id, `${stream}/${file.id}`])),
    heads: signed ? [signed] : [],
  }
}

/**
 * `--stream` and `--device` go together, and with no files: the stream is the input. The
 * backend's secrets come from the environment, never the command line (other users see it).
 */
export function streamSource(values: InputValues, paths: string[], env: Environment): StreamSource {
  if (values.stream === undefined || values.device === undefined)
    throw new UsageError('--stream and --device go together')
  if (paths.length > 0) throw new UsageError('give --stream or files, not both')
  const { HEM_NATS_USER: user, HEM_NATS_PASSWORD: pass, HEM_NATS_TOKEN: token } = env
  if (token !== undefined && user !== undefined) throw new UsageError('give HEM_NATS_TOKEN or HEM_NATS_USER, not both')
  if ((user === undefined) !== (pass === undefined))
    throw new UsageError('HEM_NATS_USER and HEM_NATS_PASSWORD go together')
  const auth = token !== undefined ? { token } : user !== undefined && pass !== undefined ? { user, pass } : undefined
  return {
    url: values.stream,
    devid: values.device,
    generation: streamGeneration(values['stream-generation']),
    ...(values.domain !== undefined ? { domain: values.domain } : {}),
    ...(auth ? { auth } : {}),
    ...(values['tls-ca'] !== undefined ? { tlsCa: values['tls-ca'] } : {}),
  }
}

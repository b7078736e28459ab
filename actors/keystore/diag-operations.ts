// The key store's DIAG operations (crypto-contract §6): its flash image read and damaged, for the
// family's certification scripts and fault drills. Registered only on a device started with
// `--diag`; they take no token (the gateway's routes are open), so they must never show a key in
// clear: the image holds only sealed records, tombstones and zeros.

import type { OperationSpec } from '../../bus/index.js'
import {
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  type KEYSTORE_DIAG_OPS,
} from '../../protocol/index.js'
import type { KeystoreContext } from './keystore-context.js'

/** The most bytes one dump answers (crypto-contract §6): less than one slot of the image. */
export const MAX_DUMP = 4095

/** Records start 32-byte aligned, and only there may the image be damaged. */
const ALIGNMENT = 32

const DECIMAL = /^\d{1,10}$/

export function keystoreDiagOperations(
  actor: KeystoreContext,
): Record<(typeof KEYSTORE_DIAG_OPS)[number], OperationSpec> {
  return {
    diag_memdump: { handler: (req) => memdump(actor, req), exclusive: false },
    diag_corrupt_repo: { handler: (req) => corruptRepo(actor, req) },
  }
}

/** `{address, length, dump}`: `len` bytes of the image at `addr`, read from the media now. */
async function memdump(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  const address = decimal(req, 'addr')
  const length = decimal(req, 'len')
  if (address === undefined || length === undefined) return notDecimal(address === undefined ? 'addr' : 'len')
  if (length < 1 || length > MAX_DUMP) return badRequest(`\`len\` must be from 1 to ${MAX_DUMP}`)
  const size = actor.repository.imageSize
  if (address + length > size)
    return badRequest(`\`addr\` + \`len\` must not pass the end of the key store image (${size} bytes)`)
  const dump = await actor.repository.readImage(address, length)
  actor.logger.warn({ op: 'diag_memdump', address, length }, 'DIAG: the key store image was read')
  return { status: 200, body: { address, length, dump: encodeBase64(dump) } }
}

/** `{address, status: 1}`: bytes `addr + 4` to `addr + 7` of the image zeroed on the media; memory keeps its keys. */
async function corruptRepo(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  const address = decimal(req, 'addr')
  if (address === undefined) return notDecimal('addr')
  if (address % ALIGNMENT !== 0) return badRequest(`\`addr\` must be a multiple of ${ALIGNMENT}`)
  const size = actor.repository.imageSize
  if (address >= size) return badRequest(`\`addr\` must lie within the key store image (${size} bytes)`)
  await actor.repository.damageImage(address)
  actor.logger.warn({ op: 'diag_corrupt_repo', address }, 'DIAG: the key store image was damaged on purpose')
  return { status: 200, body: { address, status: 1 } }
}

/** A path parameter of plain decimal digits (no sign, no hex, at most 10 digits); undefined otherwise. */
function decimal(req: CommandRequest, name: string): number | undefined {
  const text = req.params?.[name]
  return typeof text === 'string' && DECIMAL.test(text) ? Number(text) : undefined
}

function notDecimal(name: string): CommandReply {
  return badRequest(`\`${name}\` must be a decimal number of 1 to 10 digits`)
}

function badRequest(message: string): CommandReply {
  return fail(400, 'bad_request', message)
}

import {
  BACKUP_OPS,
  type CommandReply,
  CONFIG_FIELD_RULES,
  type CommandRequest,
  encodeBase64,
  fail,
  type JournalEntry,
  LogResult,
  LogType,
  RESTORED_KEYS_PER_RECORD,
  type RestoredKeyRow,
} from '../../protocol/index.js'
import { plainConfigFields } from '../../machines/index.js'
import type { AuthContext } from './auth-context.js'
import { ConfigRuleError, personalisationFields, usableSectors } from './config-rules.js'
import { loginSalt } from './login.js'
import { refusal, usableKeys } from './personalise.js'

/** How long the key store may take to open a file: scrypt runs for seconds on a loaded device. */
const OPEN_DEADLINE_MS = 60_000

/**
 * `backup`: the master's token (checked here and again by the key store) with the configuration's plain fields and the
 * login public keys, which only this service holds, goes to the key store, which seals the file (docs/backup.md).
 */
export function backup(actor: AuthContext, req: CommandRequest, bearer: string): Promise<CommandReply> {
  const login = actor.hal.enclave.credentials()
  if (!login) return Promise.resolve(fail(409, 'not_personalised', 'The device is not personalised'))
  const cfg: Record<string, unknown> = {}
  const usable = usableSectors(actor.hal.storage)
  // A field still at a factory value no personalisation could give (no `ip` on E) stays out: it is that value again.
  for (const field of plainConfigFields)
    if (CONFIG_FIELD_RULES[field].valid(actor.config[field], usable)) cfg[field] = actor.config[field]
  // Not a field personalisation sets: the restored device keeps the source's, as the same configuration.
  cfg.instanceid = actor.config.instanceid
  const body = { cfg, user: login.user, master: login.master, salt: loginSalt(actor) }
  return actor.keystore(BACKUP_OPS.create, { rid: req.rid, tls: req.tls, bearer, body })
}

interface Opened {
  source: { devid: string; log_key: string; head: Record<string, unknown> }
  created: number
  sha256: string
  cfg: Record<string, unknown>
  user: Uint8Array
  master: Uint8Array
  salt: string
  keys: RestoredKeyRow[]
}

/**
 * `POST /api/system/restore {passphrase}`, on a fresh device: the key store opens the staged file and stores its keys,
 * then the login keys go into the enclave, then ONE append journals the personalisation's RESTORE transition, the
 * RESTORE record and the RESTORE_KEYS records. Should the append fail, the keys and login keys are erased again; should
 * the process die before it, the key store erases the keys (no owner followed) and a fresh device ignores login keys.
 */
export async function restore(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const refused = refusal(actor)
  if (refused) {
    const code = (refused.body as { error: string }).error
    const status = code === 'already_personalised' ? 409 : refused.status
    await journalRefusal(actor, req, status, code)
    return { ...refused, status }
  }
  const passphrase = (req.body as { passphrase?: unknown } | undefined)?.passphrase
  const open = { rid: req.rid, tls: req.tls, body: { passphrase } }
  const reply = await actor.keystore(BACKUP_OPS.open, open, OPEN_DEADLINE_MS)
  if (reply.status !== 200) return reply
  const opened = reply.body as Opened
  let changes
  try {
    changes = personalisationFields(opened.cfg, actor.hal.variant, usableSectors(actor.hal.storage))
    usableKeys(actor, opened)
  } catch (err) {
    if (!(err instanceof ConfigRuleError)) throw err
    await actor.keystore(BACKUP_OPS.abort, { rid: req.rid, tls: req.tls })
    await journalRefusal(actor, req, 406, 'unsupported_backup', opened.sha256)
    return fail(406, 'unsupported_backup', `The backup's configuration does not suit this device: ${err.message}`)
  }
  const at = actor.now()
  const instanceid = typeof opened.cfg.instanceid === 'string' ? opened.cfg.instanceid : ''
  // The source's eid, unless this device restores its own backup: the owner's keys were derived with it.
  const own = opened.salt === encodeBase64(actor.hal.enclave.identityPublicKey)
  await actor.hal.enclave.setCredentials({
    user: opened.user,
    master: opened.master,
    ...(own ? {} : { salt: opened.salt }),
  })
  try {
    await actor.personalisation.send({ type: 'RESTORE' }, restoreEntries(req, opened, changes, instanceid, at))
  } catch (err) {
    await Promise.all([
      actor.hal.enclave.wipe(),
      actor.keystore(BACKUP_OPS.abort, { rid: req.rid, tls: req.tls }),
    ]).catch((undo: Error) => actor.logger.error({ err: undo.message }, 'undoing a failed restore failed'))
    throw err
  }
  actor.applyConfig({ kind: 'personalised', cfg: changes, instanceid, at })
  if (actor.personalisation.matches('formatting')) actor.diskFormat.start('personalisation')
  actor.publish()
  return { status: 200, body: { source: opened.source.devid, keys: opened.keys.length, sha256: opened.sha256 } }
}

function restoreEntries(
  req: CommandRequest,
  opened: Opened,
  cfg: Record<string, unknown>,
  instanceid: string,
  at: number,
): JournalEntry[] {
  const { source, sha256, keys, created } = opened
  const entries: JournalEntry[] = [
    {
      type: LogType.RESTORE,
      result: LogResult.OK,
      subject: 'M',
      data: { source: { ...source, created }, sha256, keys: keys.length, cfg, instanceid, at, rid: req.rid },
    },
  ]
  for (let i = 0; i < keys.length; i += RESTORED_KEYS_PER_RECORD)
    entries.push({
      type: LogType.RESTORE_KEYS,
      result: LogResult.OK,
      subject: 'M',
      data: { sha256, keys: keys.slice(i, i + RESTORED_KEYS_PER_RECORD) },
    })
  return entries
}

async function journalRefusal(
  actor: AuthContext,
  req: CommandRequest,
  status: number,
  code: string,
  sha256?: string,
): Promise<void> {
  const data = { status, code, rid: req.rid, ...(sha256 ? { sha256 } : {}) }
  await actor.journal([{ type: LogType.RESTORE, result: LogResult.FAILED, data }])
}

import { randomBytes } from 'node:crypto'
import {
  base64Field,
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  LogResult,
  LogType,
} from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { clientSource } from './client-source.js'
import { INIT_TOKEN_LIFETIME } from './bearer.js'
import { ConfigRuleError, personalisationFields, usableSectors } from './config-rules.js'
import { EjwtError, parseEjwt, validateInitClaims } from './ejwt.js'

/** Why the device takes no new owner now, if it does not. */
export function refusal(actor: AuthContext): CommandReply | undefined {
  // Between a wipeout and its reboot the device is not yet clean (the key store erases its
  // repository on its own schedule, and at the latest at the next boot).
  if (actor.wipedOut)
    return fail(409, 'reboot_pending', 'The device is resetting after a wipeout; try again once it has rebooted')
  // Who owned it and what it held cannot be known from a broken history: an auditor's case.
  if (!actor.intact)
    return fail(409, 'device_fault', 'The journal does not verify: the device takes no owner (see fls_state in status)')
  if (!actor.fresh) return fail(406, 'already_personalised', 'The device is already personalised')
  return undefined
}

/** `GET /api/auth/init`: the challenge a fresh device's owner signs with the master key. */
export function initChallenge(actor: AuthContext, req: Pick<CommandRequest, 'source'> = {}): CommandReply {
  const refused = refusal(actor)
  if (refused) return refused
  const { jti, exp } = actor.challenges.issue(actor.now(), clientSource(req.source))
  const genuine = actor.hal.variant === 'P' ? { genuine: encodeBase64(genuineOf(actor)) } : {}
  return {
    status: 200,
    body: { exp, spk: actor.session.spk, jti, ...genuine, eid: encodeBase64(actor.hal.enclave.identityPublicKey) },
  }
}

/**
 * `POST /api/auth/init {init}`: the master-signed eJWT with `cfg` makes the device its
 * owner's. The keys are stored before the transition and DEVICE_INITED are journaled: a device
 * personalised without them would let nobody in, for good.
 */
export async function personalise(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const refused = refusal(actor)
  if (refused) return refused
  let cfg: Record<string, unknown>
  let keys: { user: Uint8Array; master: Uint8Array }
  try {
    const parsed = parseEjwt((req.body as { init?: unknown } | undefined)?.init)
    const claims = validateInitClaims(parsed.payload, { spk: actor.session.spk, now: actor.now() })
    cfg = claims.cfg
    keys = { user: publicKey(cfg.userkey, 'userkey'), master: publicKey(cfg.masterkey, 'masterkey') }
    usableKeys(actor, keys)
    if (!Buffer.from(claims.iss).equals(Buffer.from(keys.master)))
      throw new EjwtError('unknown_key', 'init must be signed with the master key')
    actor.session.verify(parsed, keys.master)
    const changes = personalisationFields(cfg, actor.hal.variant, usableSectors(actor.hal.storage))
    if ('gen_csr' in cfg && typeof cfg.gen_csr !== 'boolean')
      throw new ConfigRuleError(400, 'bad_request', '`cfg.gen_csr` must be true or false')
    if (!actor.challenges.consume(claims.jti, actor.now()))
      throw new EjwtError('unknown_jti', 'the challenge is unknown, used or expired')

    const instanceid = randomBytes(16).toString('hex')
    const at = actor.now()
    // Harmless while the machine is fresh: nobody logs in to a fresh device (see AuthActor.fresh).
    await actor.hal.enclave.setCredentials(keys)
    try {
      await actor.personalisation.send({ type: 'PERSONALISE' }, [
        {
          type: LogType.DEVICE_INITED,
          result: LogResult.OK,
          subject: 'M',
          data: { source: 200, rid: req.rid, cfg: changes, instanceid, at },
        },
      ])
    } catch (err) {
      // Unless the journal fails to verify at a later boot: then stored keys count as an owner's.
      await actor.hal.enclave
        .wipe()
        .catch((wipeErr: Error) =>
          actor.logger.error({ err: wipeErr.message }, 'the keys of a failed personalisation stay stored'),
        )
      throw err
    }
    actor.applyConfig({ kind: 'personalised', cfg: changes, instanceid, at })
    if (actor.personalisation.matches('formatting')) actor.diskFormat.start('personalisation')
    actor.publish()
    const token = actor.tokens.mint({ scope: 'system:config', sub: 'U', exp: at + INIT_TOKEN_LIFETIME }, at)
    const csr = cfg.gen_csr === true ? { csr: encodeBase64(await actor.hal.enclave.tlsCsr(actor.config.hostname)) } : {}
    const genuine = cfg.gen_csr === true && actor.hal.variant === 'P' ? { genuine: encodeBase64(genuineOf(actor)) } : {}
    return { status: 200, body: { instanceid, token, ...csr, ...genuine } }
  } catch (err) {
    if (err instanceof EjwtError)
      return fail(
        err.status,
        err.status === 400 ? 'bad_request' : 'unauthorized',
        err.status === 400 ? err.message : 'Authentication failed',
      )
    if (err instanceof ConfigRuleError) return fail(err.status, err.code, err.message)
    throw err
  }
}

/** Attestation data: the factory's once provisioned, the enclave's own statement before. */
export function genuineOf(actor: AuthContext): Uint8Array {
  const { enclave } = actor.hal
  return enclave.provisioning()?.genuine ?? enclave.attestation().genuine
}

/** Keys nobody could log in with, or with which the master would log in as the user, are refused. */
export function usableKeys(actor: AuthContext, keys: { user: Uint8Array; master: Uint8Array }): void {
  if (Buffer.from(keys.user).equals(Buffer.from(keys.master)))
    throw new ConfigRuleError(400, 'bad_request', '`cfg.userkey` and `cfg.masterkey` must differ')
  for (const [field, key] of [
    ['userkey', keys.user],
    ['masterkey', keys.master],
  ] as const) {
    if (!actor.session.agree(key))
      throw new ConfigRuleError(
        400,
        'bad_request',
        `\`cfg.${field}\` is a point of small order: no passphrase logs in with it`,
      )
  }
}

function publicKey(value: unknown, field: string): Uint8Array {
  const key = base64Field(value)
  if (key?.length !== 32)
    throw new ConfigRuleError(400, 'bad_request', `\`cfg.${field}\` must be base64 of a 32-byte X25519 public key`)
  return key
}

import { base64Field, type CommandReply, type CommandRequest, encodeBase64, fail } from '../../protocol/index.js'
import { AlreadyProvisionedError } from '../../hal/index.js'
import { verifyProvisioning } from './verify-provisioning.js'
import type { AuthContext } from './auth-context.js'
import { configUpdated } from './config-updated.js'

/**
 * `GET /api/system/config/attestation` (P): `{genuine, csr}` before provisioning, `{crt, genuine}` after.
 * The gateway refuses it with 409 while fls_state ≠ 0 (the route is marked `healthy`).
 */
export function attestation(actor: AuthContext): CommandReply {
  const { enclave } = actor.hal
  const record = enclave.provisioning()
  if (record) return { status: 200, body: { crt: encodeBase64(record.crt), genuine: encodeBase64(record.genuine) } }
  const request = enclave.attestation()
  return { status: 200, body: { genuine: encodeBase64(request.genuine), csr: encodeBase64(request.csr) } }
}

/**
 * `POST /api/system/config/provisioning` (P): the factory's certificate for the enclave's
 * attestation key, once. A personalised device refuses (403), a provisioned one too (406).
 */
export async function provision(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const { enclave } = actor.hal
  if (!actor.fresh) return fail(403, 'device_personalised', 'A personalised device cannot be provisioned')
  // Asked before the body is looked at: a provisioned device answers 406 to any request, garbage too.
  // The enclave's record counts too: it may have been written without the journal hearing of it.
  if (!actor.provisioning.can({ type: 'PROVISION' }) || enclave.provisioning()) return alreadyProvisioned()
  const body = req.body as { crt?: unknown; genuine?: unknown } | undefined
  const crt = base64Field(body?.crt)
  const genuine = base64Field(body?.genuine)
  if (!crt?.length || !genuine?.length) return fail(400, 'bad_request', '`crt` and `genuine` must be base64')
  const verdict = verifyProvisioning(
    { crt, genuine },
    {
      attestationPublicKey: enclave.attestationPublicKey(),
      factoryRoot: enclave.factoryRoot(),
      genuineId: enclave.genuineId!,
      devid: actor.hal.devid,
      // An RTC never set (a factory-fresh device) cannot judge the validity period.
      ...(actor.hal.clock.isSet() ? { now: actor.hal.clock.now() } : {}),
    },
  )
  if (!verdict.ok) return fail(verdict.status, verdict.code, verdict.message)
  await actor.provisioning.send({ type: 'PROVISION' }, [configUpdated(200, req.rid, { provisioned: true })])
  try {
    await enclave.provision({ crt, genuine })
  } catch (err) {
    // Another writer won the enclave's exclusive write: it is provisioned all the same.
    if (err instanceof AlreadyProvisionedError) return alreadyProvisioned()
    throw err
  }
  return { status: 200, body: {} }
}

function alreadyProvisioned(): CommandReply {
  return fail(406, 'already_provisioned', 'The device is already provisioned')
}

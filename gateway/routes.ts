import { Type, type TSchema } from '@sinclair/typebox'
import {
  anonymousSearchAllowed,
  type KeyOperation,
  keyOperationScopes,
  operationAccess,
  USER_ROLES,
  type Variant,
} from '../protocol/index.js'
import { apiDescription } from './api-description.js'
import { renderStatus } from './status.js'
import type { Route } from './types.js'
import { renderVersion } from './version.js'

const str = (maxLength = 256) => Type.Optional(Type.String({ maxLength }))
const bool = () => Type.Optional(Type.Boolean())
const int = () => Type.Optional(Type.Integer())

/** Types only: the auth actor checks values, lengths and what may change when. */
const configUpdate = Type.Object(
  {
    allow_keysearch: bool(),
    email: str(),
    storage_mode: int(),
    wipeout: bool(),
    origin: str(),
    trusted_ts: bool(),
    trusted_backend: bool(),
    tls: Type.Optional(Type.Object({ emp: str(), key: str(6000), crt: Type.String({ maxLength: 7000 }) })),
    user: str(),
    userkey: str(),
    userkey_nonce: str(),
    userkey_hmac: str(),
    ctx: int(),
    dnsd: bool(),
    storage_disk0size: int(),
    gen_csr: bool(),
    hostname: str(),
    ip: str(),
    http_option_hsts: bool(),
    http_option_dosprot_mode: int(),
  },
  { additionalProperties: true },
)

const kid = () => Type.String({ maxLength: 64 })
const keyAttributes = { label: Type.String({ maxLength: 64 }), descr: str(128) }

/**
 * A key-management or cipher route: HTTPS only, U and ExtAuth, refused while the device is in a
 * fail state. The key store checks the token and its scope again (protocol/access-rules.ts).
 */
function keyRoute(
  method: Route['method'],
  path: string,
  op: KeyOperation,
  extra: { body?: TSchema } & Partial<Route> = {},
): Route {
  const scopes = [...keyOperationScopes[op]]
  return {
    method,
    path,
    variants: ['P', 'E'],
    auth: 'token',
    scopes,
    roles: USER_ROLES,
    tls: 'required',
    healthy: true,
    handler: { kind: 'command', service: 'keystore', op },
    ...extra,
  }
}

/** Types only: the key store checks the values and answers (and journals) the 400 of a malformed request itself. */
const cipherBody = Type.Object({
  alg: Type.String(),
  kid: kid(),
  ext_kid: Type.Optional(kid()),
  pubkey: str(),
  msg: Type.String(),
  ctx: str(),
  aad: str(),
  iv: str(),
  tag: str(),
})

/**
 * Every route the device answers; the gateway, the OpenAPI document and the route-matrix tests read this.
 * A route for a principal takes its access rule from protocol/access-rules.ts, where the service behind it does.
 */
export const routeTable: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/system/version',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'read', render: renderVersion },
  },
  {
    method: 'GET',
    path: '/api/system/status',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'read', render: renderStatus },
  },
  {
    method: 'GET',
    path: '/api/openapi.json',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'read', render: apiDescription(() => routeTable) },
  },

  {
    method: 'GET',
    path: '/api/auth/init',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'command', service: 'auth', op: 'init_challenge' },
  },
  {
    method: 'POST',
    path: '/api/auth/init',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    body: Type.Object({ init: Type.String({ maxLength: 7000 }) }),
    deadline: 'medium',
    handler: { kind: 'command', service: 'auth', op: 'init' },
  },
  {
    method: 'GET',
    path: '/api/auth/token',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'command', service: 'auth', op: 'challenge' },
  },
  {
    method: 'POST',
    path: '/api/auth/token',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    body: Type.Object({ auth: Type.String({ maxLength: 4096 }) }),
    bodyCheck: 'actor',
    deadline: 'medium',
    handler: { kind: 'command', service: 'auth', op: 'login' },
  },

  {
    method: 'GET',
    path: '/api/system/config',
    variants: ['P', 'E'],
    ...operationAccess.configRead,
    tls: 'any',
    handler: { kind: 'command', service: 'auth', op: 'config_get' },
  },
  {
    method: 'POST',
    path: '/api/system/config',
    variants: ['P', 'E'],
    ...operationAccess.configWrite,
    tls: 'any',
    body: configUpdate,
    deadline: 'long',
    handler: { kind: 'command', service: 'auth', op: 'config_set' },
  },
  {
    method: 'GET',
    path: '/api/system/config/attestation',
    variants: ['P'],
    ...operationAccess.attestation,
    tls: 'any',
    healthy: true,
    handler: { kind: 'command', service: 'auth', op: 'attestation' },
  },
  {
    method: 'POST',
    path: '/api/system/config/provisioning',
    variants: ['P'],
    auth: 'open',
    tls: 'any',
    body: Type.Object({ crt: Type.String({ maxLength: 4096 }), genuine: Type.String({ maxLength: 2048 }) }),
    handler: { kind: 'command', service: 'auth', op: 'provision' },
  },

  {
    method: 'GET',
    path: '/api/system/checkin',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'command', service: 'auth', op: 'checkin_get' },
  },
  {
    method: 'POST',
    path: '/api/system/checkin',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    body: Type.Object({ checked: Type.String({ maxLength: 7000 }) }),
    deadline: 'medium',
    handler: { kind: 'command', service: 'auth', op: 'checkin_post' },
  },
  {
    method: 'GET',
    path: '/api/system/selftest',
    variants: ['P', 'E'],
    ...operationAccess.selftest,
    tls: 'any',
    deadline: 'medium',
    handler: { kind: 'command', service: 'system', op: 'selftest' },
  },
  {
    method: 'GET',
    path: '/api/system/reboot',
    variants: ['P', 'E'],
    ...operationAccess.reboot,
    tls: 'any',
    deadline: 'medium',
    handler: { kind: 'command', service: 'system', op: 'reboot' },
  },
  {
    method: 'GET',
    path: '/api/system/shutdown',
    variants: ['P', 'E'],
    ...operationAccess.shutdown,
    tls: 'any',
    deadline: 'medium',
    handler: { kind: 'command', service: 'system', op: 'shutdown' },
  },

  ...upgradeRoutes('fw', ['P', 'E'], ['firmware.bin']),
  ...upgradeRoutes('ui', ['P'], ['webroot.tar', 'ui.bin']),

  {
    method: 'GET',
    path: '/api/logger/key',
    variants: ['P', 'E'],
    ...operationAccess.logger,
    tls: 'any',
    handler: { kind: 'command', service: 'logger', op: 'key' },
  },
  {
    method: 'GET',
    path: '/api/logger/list',
    variants: ['P'],
    ...operationAccess.logger,
    tls: 'any',
    handler: { kind: 'command', service: 'logger', op: 'list' },
  },
  {
    method: 'GET',
    path: '/api/logger/list/:offset',
    variants: ['P'],
    ...operationAccess.logger,
    tls: 'any',
    handler: { kind: 'command', service: 'logger', op: 'list' },
  },
  {
    method: 'GET',
    path: '/api/logger/:id',
    variants: ['P'],
    ...operationAccess.logger,
    tls: 'any',
    deadline: 'long',
    handler: { kind: 'stream', service: 'logger', op: 'read', chunk: 'read_chunk' },
  },

  ...(
    [
      ['/api/storage/unlock', 'unlock'],
      ['/api/storage/unlock/ro', 'unlock_ro'],
      ['/api/storage/unlock/rw', 'unlock_rw'],
      ['/api/storage/lock', 'lock'],
    ] as const
  ).map(([path, op]): Route => ({
    method: 'GET',
    path,
    variants: ['P'],
    ...operationAccess.storage,
    tls: 'any',
    healthy: true,
    deadline: 'medium',
    handler: { kind: 'command', service: 'storage', op },
  })),

  keyRoute('POST', '/api/keymgmt/create', 'create', {
    body: Type.Object({ ...keyAttributes, type: Type.String({ maxLength: 16 }), mode: str(16) }),
  }),
  keyRoute('POST', '/api/keymgmt/import', 'import', {
    body: Type.Object({
      ...keyAttributes,
      type: Type.String({ maxLength: 16 }),
      mode: str(16),
      pubkey: Type.String({ maxLength: 256 }),
    }),
  }),
  keyRoute('GET', '/api/keymgmt/list', 'list'),
  keyRoute('GET', '/api/keymgmt/list/:offset', 'list'),
  keyRoute('GET', '/api/keymgmt/list/:offset/:count', 'list'),
  keyRoute('GET', '/api/keymgmt/get/:kid', 'get'),
  keyRoute('DELETE', '/api/keymgmt/delete/:kid', 'delete'),
  keyRoute('POST', '/api/keymgmt/update', 'update', { body: Type.Object({ ...keyAttributes, kid: kid() }) }),
  keyRoute('POST', '/api/keymgmt/search', 'search', {
    body: Type.Object({ descr: Type.String({ maxLength: 256 }), offset: int(), limit: int() }),
    anonymous: (body, identity) => anonymousSearchAllowed(body, identity.allow_keysearch),
  }),
  keyRoute('POST', '/api/crypto/cipher/encrypt', 'encrypt', { body: cipherBody, bodyCheck: 'actor' }),
  keyRoute('POST', '/api/crypto/cipher/decrypt', 'decrypt', { body: cipherBody, bodyCheck: 'actor' }),
]

/**
 * upload, check and install of one image kind: no token on a fresh device, then `system:upgrade`
 * or `system:config` from any role; plain HTTP is fine, since the images are signed (seed §4).
 */
function upgradeRoutes(kind: 'fw' | 'ui', variants: Variant[], filenames: string[]): Route[] {
  const common = {
    variants,
    ...operationAccess.upgrade,
    tls: 'any',
    // Uploading, checking and installing an image move megabytes through storage (install writes a slot).
    deadline: 'long',
  } satisfies Partial<Route>
  return [
    {
      method: 'POST',
      path: `/api/system/upgrade/upload_${kind}`,
      ...common,
      handler: { kind: 'upload', service: 'upgrade', begin: `upload_begin_${kind}`, filenames },
    },
    {
      method: 'GET',
      path: `/api/system/upgrade/check_${kind}`,
      ...common,
      handler: { kind: 'command', service: 'upgrade', op: `check_${kind}` },
    },
    {
      method: 'GET',
      path: `/api/system/upgrade/install_${kind}`,
      ...common,
      handler: { kind: 'command', service: 'upgrade', op: `install_${kind}` },
    },
  ]
}

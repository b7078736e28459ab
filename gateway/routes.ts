import { Type, type TSchema } from '@sinclair/typebox'
import {
  anonymousSearchAllowed,
  BACKUP_OPS,
  type KeyOperation,
  keyOperationScopes,
  operationAccess,
  USER_ROLES,
  type Variant,
} from '../protocol/index.js'
import { apiDescription } from './api-description.js'
import { StatusRendering } from './status-rendering.js'
import type { Route, RouteHandler } from './types.js'
import { servedTlsReply } from './served-tls.js'
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

/** Who may call a route: as the service behind it rules (protocol/access-rules.ts), or anyone. */
type Access = Pick<Route, 'auth' | 'scopes' | 'roles'>
const open: Access = { auth: 'open' }

const command = (service: string, op: string): RouteHandler => ({ kind: 'command', service, op })

/** A route of both variants over HTTP or HTTPS, unless `extra` narrows it. */
function route(
  method: Route['method'],
  path: string,
  access: Access,
  handler: RouteHandler,
  extra: Partial<Route> = {},
): Route {
  return { method, path, variants: ['P', 'E'], ...access, tls: 'any', ...extra, handler }
}

/**
 * A key-management or crypto route: HTTPS only, U and ExtAuth, refused while the device is in a
 * fail state. The key store checks the token and its scope again (protocol/access-rules.ts).
 */
function keyRoute(
  method: Route['method'],
  path: string,
  op: KeyOperation,
  extra: { body?: TSchema } & Partial<Route> = {},
): Route {
  const access = { auth: 'token', scopes: [...keyOperationScopes[op]], roles: USER_ROLES } as const
  const rules = { tls: 'required', healthy: true, nullIsAbsent: true } as const
  return route(method, path, access, command('keystore', op), { ...rules, ...extra })
}

/**
 * The body of a crypto operation, types only: the key store parses it, checks the values and
 * answers (and journals) the 400 of a malformed request itself. `required` fields must be there.
 */
function cryptoBody(required: string[], optional: string[] = []): TSchema {
  const field = (name: string) => (name === 'kid' || name === 'ext_kid' ? kid() : Type.String())
  return Type.Object(
    Object.fromEntries([
      ['kid', kid()],
      ...required.map((name) => [name, field(name)]),
      ...optional.map((name) => [name, Type.Optional(field(name))]),
    ]),
  )
}

const peer = ['ext_kid', 'pubkey']

/**
 * An operation on the key the body names, body parsed by the key store, which also checks a
 * `keymgmt:use:<kid>` scope exactly against that KID (derive's scopes name no key).
 */
function cryptoRoute(path: string, op: KeyOperation, required: string[], optional: string[] = []): Route {
  return keyRoute('POST', path, op, { body: cryptoBody(required, optional), bodyCheck: 'actor' })
}

/** Shared by every gateway of the process: it renders again for a gateway whose read models differ. */
const status = new StatusRendering()

/**
 * Every route the device answers; the gateway, the OpenAPI document and the route-matrix tests read this.
 * A route for a principal takes its access rule from protocol/access-rules.ts, where the service behind it does.
 */
export const routeTable: readonly Route[] = [
  route('GET', '/api/system/version', open, { kind: 'read', render: renderVersion }),
  route('GET', '/api/system/status', open, { kind: 'read', render: (ctx) => status.render(ctx) }),
  route('GET', '/api/openapi.json', open, { kind: 'read', render: apiDescription(() => routeTable) }),
  route('GET', '/api/system/tls', open, { kind: 'read', render: (ctx) => servedTlsReply(ctx.servedTls) }),

  route('GET', '/api/auth/init', open, command('auth', 'init_challenge'), { source: true }),
  route('POST', '/api/auth/init', open, command('auth', 'init'), {
    body: Type.Object({ init: Type.String({ maxLength: 7000 }) }),
    deadline: 'medium',
  }),
  route('GET', '/api/auth/token', open, command('auth', 'challenge'), { source: true }),
  route('POST', '/api/auth/token', open, command('auth', 'login'), {
    body: Type.Object({ auth: Type.String({ maxLength: 4096 }) }),
    bodyCheck: 'actor',
    deadline: 'medium',
    source: true,
    tooManyRequests: 'too many login attempts wait, from this client or in all; refused unread, Retry-After in s',
    refusedAtStop: true,
  }),

  route('GET', '/api/system/config', operationAccess.configRead, command('auth', 'config_get')),
  route('POST', '/api/system/config', operationAccess.configWrite, command('auth', 'config_set'), {
    body: configUpdate,
    deadline: 'long',
  }),
  route('GET', '/api/system/config/attestation', operationAccess.attestation, command('auth', 'attestation'), {
    variants: ['P'],
    healthy: true,
  }),
  route('POST', '/api/system/config/provisioning', open, command('auth', 'provision'), {
    variants: ['P'],
    body: Type.Object({ crt: Type.String({ maxLength: 4096 }), genuine: Type.String({ maxLength: 2048 }) }),
  }),

  route('GET', '/api/system/checkin', open, command('auth', 'checkin_get'), { source: true }),
  route('POST', '/api/system/checkin', open, command('auth', 'checkin_post'), {
    body: Type.Object({ checked: Type.String({ maxLength: 7000 }) }),
    deadline: 'medium',
  }),
  ...extAuthRoutes(),
  route('GET', '/api/system/selftest', operationAccess.selftest, command('system', 'selftest'), { deadline: 'medium' }),
  route('GET', '/api/system/reboot', operationAccess.reboot, command('system', 'reboot'), { deadline: 'medium' }),
  route('GET', '/api/system/shutdown', operationAccess.shutdown, command('system', 'shutdown'), { deadline: 'medium' }),

  ...backupRoutes(),

  ...upgradeRoutes('fw', ['P', 'E'], ['firmware.bin']),
  ...upgradeRoutes('ui', ['P'], ['webroot.tar', 'ui.bin']),

  route('GET', '/api/logger/key', operationAccess.logger, command('logger', 'key')),
  route('GET', '/api/logger/list', operationAccess.logger, command('logger', 'list'), { variants: ['P'] }),
  route('GET', '/api/logger/list/:offset', operationAccess.logger, command('logger', 'list'), { variants: ['P'] }),
  route(
    'GET',
    '/api/logger/:id',
    operationAccess.logger,
    { kind: 'stream', service: 'logger', op: 'read', chunk: 'read_chunk' },
    { variants: ['P'], deadline: 'long' },
  ),

  ...(
    [
      ['/api/storage/unlock', 'unlock'],
      ['/api/storage/unlock/ro', 'unlock_ro'],
      ['/api/storage/unlock/rw', 'unlock_rw'],
      ['/api/storage/lock', 'lock'],
    ] as const
  ).map(([path, op]) =>
    route('GET', path, operationAccess.storage, command('storage', op), {
      variants: ['P'],
      healthy: true,
      deadline: 'medium',
    }),
  ),

  keyRoute('POST', '/api/keymgmt/create', 'create', {
    body: Type.Object({ ...keyAttributes, type: Type.String({ maxLength: 16 }), mode: str(16) }),
  }),
  keyRoute('POST', '/api/keymgmt/import', 'import', {
    body: Type.Object({
      ...keyAttributes,
      type: Type.String({ maxLength: 16 }),
      mode: str(16),
      // Base64 of the longest public key, ML-DSA-87's 2592 bytes.
      // An ML-DSA-87 key in base64 is 3456 characters: a few bytes more reach the key store's 406.
      pubkey: Type.String({ maxLength: 3600 }),
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
  cryptoRoute('/api/keymgmt/derive', 'derive', ['label', 'type'], [...peer, 'mode', 'descr']),
  cryptoRoute('/api/crypto/cipher/encrypt', 'encrypt', ['alg', 'msg'], [...peer, 'ctx', 'aad']),
  cryptoRoute('/api/crypto/cipher/decrypt', 'decrypt', ['alg', 'msg'], [...peer, 'ctx', 'aad', 'iv', 'tag']),
  cryptoRoute('/api/crypto/cipher/wrap', 'wrap', ['msg'], ['alg', ...peer, 'ctx', 'iv']),
  cryptoRoute('/api/crypto/cipher/unwrap', 'unwrap', ['msg'], ['alg', ...peer, 'ctx', 'iv']),
  cryptoRoute('/api/crypto/exdsa/sign', 'sign', ['msg', 'alg'], ['ctx']),
  cryptoRoute('/api/crypto/exdsa/verify', 'verify', ['msg', 'alg', 'sign'], ['ctx']),
  cryptoRoute('/api/crypto/hmac/hash', 'hmac', ['msg'], ['alg', ...peer]),
  cryptoRoute('/api/crypto/hmac/verify', 'hmac_verify', ['msg', 'mac'], ['alg', ...peer]),
  cryptoRoute('/api/crypto/ecdh', 'ecdh', [], [...peer, 'alg']),
  cryptoRoute('/api/crypto/pqc/mlkem/encaps', 'mlkem_encaps', []),
  cryptoRoute('/api/crypto/pqc/mlkem/decaps', 'mlkem_decaps', ['ct']),
  cryptoRoute('/api/crypto/pqc/mldsa/sign', 'mldsa_sign', ['msg'], ['ctx']),
  cryptoRoute('/api/crypto/pqc/mldsa/verify', 'mldsa_verify', ['msg', 'sign'], ['ctx']),
]

/**
 * The external authenticator's (ext-auth contract §1): POST over HTTP or HTTPS, its order of checks (a bad token 401,
 * no clock 403, the device's state 409, then the token's absence, role and scope), bodies of at most 7300 bytes as
 * every body. Types only: the auth actor checks the values (and parses ext/token's body itself, within the floor).
 */
function extAuthRoutes(): Route[] {
  const epk = Type.String({ maxLength: 64 })
  const ext = (op: string, access: Access, extra: Partial<Route>): Route =>
    route('POST', `/api/auth/ext/${op}`, access, command('auth', `ext_${op}`), {
      healthy: true,
      unreadyFirst: true,
      ...extra,
    })
  return [
    ext('init', operationAccess.extPair, { body: Type.Object({ epk }), source: true }),
    ext('validate', operationAccess.extPair, {
      body: Type.Object({ pid: Type.String({ maxLength: 64 }), reply: Type.String({ maxLength: 4096 }) }),
      deadline: 'medium',
      fails: 'the reply is refused: no such challenge, not signed by its aid, a key paired already, eight pairings',
    }),
    ext('mac', operationAccess.extPair, { body: Type.Object({ epk }) }),
    ext('request', open, {
      body: Type.Object({
        epk,
        scope: Type.String({ maxLength: 1023 }),
        exp: Type.Optional(Type.Number()),
        ctx: Type.Optional(Type.String({ maxLength: 64 })),
        note: Type.Optional(Type.String({ maxLength: 128 })),
      }),
      needsClock: true,
      source: true,
    }),
    ext('token', open, {
      body: Type.Object({ authreply: Type.String({ maxLength: 4096 }) }),
      bodyCheck: 'actor',
      needsClock: true,
      fails: 'the issuer is not paired (or was unpaired), or the scope approved is not the one asked',
      deadline: 'medium',
      source: true,
      tooManyRequests: 'too many login attempts wait, from this client or in all; refused unread, Retry-After in s',
      refusedAtStop: true,
    }),
  ]
}

/**
 * Backup and restore (docs/backup.md), over HTTPS only: the master sets the backup passphrase and downloads backups
 * (`system:backup`, which opens nothing else); a fresh device takes a file and its passphrase from anyone, as it takes
 * its owner's personalisation (the key store paces failed restores).
 */
function backupRoutes(): Route[] {
  const https = { tls: 'required', healthy: true, deadline: 'long' } as const
  const passphrase = Type.Object({ passphrase: Type.String({ maxLength: 4096 }) })
  const upload: RouteHandler = {
    kind: 'upload',
    service: 'keystore',
    begin: BACKUP_OPS.uploadBegin,
    filenames: ['backup.hembackup'],
  }
  return [
    route('POST', '/api/system/backup/passphrase', operationAccess.backup, command('keystore', BACKUP_OPS.passphrase), {
      ...https,
      body: passphrase,
    }),
    route(
      'GET',
      '/api/system/backup',
      operationAccess.backup,
      { kind: 'stream', service: 'auth', op: 'backup', chunk: 'backup_chunk' },
      https,
    ),
    route('POST', '/api/system/restore/upload', open, upload, https),
    route('POST', '/api/system/restore', open, command('auth', 'restore'), {
      ...https,
      body: passphrase,
      tooManyRequests: 'failed restores are paced: after three in a boot, one per 30 s; Retry-After in s',
      fails: 'bad_backup (a wrong passphrase or an altered file), unsupported_backup (another format version)',
    }),
  ]
}

/**
 * upload, check and install of one image kind: no token on a fresh device, then `system:upgrade`
 * or `system:config` from any role; plain HTTP is fine, since the images are signed (seed §4).
 */
function upgradeRoutes(kind: 'fw' | 'ui', variants: Variant[], filenames: string[]): Route[] {
  const upload: RouteHandler = { kind: 'upload', service: 'upgrade', begin: `upload_begin_${kind}`, filenames }
  // Uploading, checking and installing an image move megabytes through storage (install writes a slot).
  const upgradeRoute = (method: Route['method'], step: string, handler: RouteHandler): Route =>
    route(method, `/api/system/upgrade/${step}_${kind}`, operationAccess.upgrade, handler, {
      variants,
      deadline: 'long',
    })
  const install = command('upgrade', `install_${kind}`)
  return [
    upgradeRoute('POST', 'upload', upload),
    upgradeRoute('GET', 'check', command('upgrade', `check_${kind}`)),
    upgradeRoute('GET', 'install', install),
    // The install with the owner's word: firmware that goes back at the same anti-rollback level needs it.
    ...(kind === 'fw'
      ? [{ ...upgradeRoute('POST', 'install', install), body: Type.Object({ allow_downgrade: bool() }) }]
      : []),
  ]
}

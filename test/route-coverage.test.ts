// Every route of the gateway's table has a method of the client library, a hemctl command and a row
// in docs/api.md: a route added without them fails here. An exemption names its reason.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { main } from '../cli/hemctl/cli.js'
import type { HemctlIo } from '../cli/hemctl/context.js'
import { HemClient } from '../client/index.js'
import { routeTable } from '../gateway/index.js'

/** The client method and the hemctl command (its words) that reach each route. */
const covered: Record<string, { client: keyof HemClient; hemctl: string }> = {
  'GET /api/system/version': { client: 'version', hemctl: 'version' },
  'GET /api/system/status': { client: 'status', hemctl: 'status' },
  'GET /api/openapi.json': { client: 'openapi', hemctl: 'openapi' },
  'GET /api/auth/init': { client: 'personalise', hemctl: 'init' },
  'POST /api/auth/init': { client: 'personalise', hemctl: 'init' },
  'GET /api/auth/token': { client: 'token', hemctl: 'login' },
  'POST /api/auth/token': { client: 'token', hemctl: 'login' },
  'POST /api/auth/ext/init': { client: 'extInit', hemctl: 'auth pair' },
  'POST /api/auth/ext/validate': { client: 'extValidate', hemctl: 'auth pair' },
  'POST /api/auth/ext/mac': { client: 'extMac', hemctl: 'auth pairings' },
  'POST /api/auth/ext/request': { client: 'extRequest', hemctl: 'login' },
  'POST /api/auth/ext/token': { client: 'extToken', hemctl: 'login' },
  'GET /api/system/config': { client: 'config', hemctl: 'config get' },
  'POST /api/system/config': { client: 'setConfig', hemctl: 'config set' },
  'GET /api/system/config/attestation': { client: 'ownedAttestation', hemctl: 'attest' },
  'POST /api/system/config/provisioning': { client: 'provision', hemctl: 'provision' },
  'GET /api/system/checkin': { client: 'checkin', hemctl: 'checkin get' },
  'POST /api/system/checkin': { client: 'checkinReply', hemctl: 'checkin reply' },
  'GET /api/system/selftest': { client: 'selftest', hemctl: 'selftest' },
  'GET /api/system/reboot': { client: 'reboot', hemctl: 'reboot' },
  'GET /api/system/shutdown': { client: 'shutdown', hemctl: 'shutdown' },
  'GET /metrics': { client: 'metrics', hemctl: 'metrics' },
  'POST /api/system/upgrade/upload_fw': { client: 'upload', hemctl: 'upgrade fw' },
  'GET /api/system/upgrade/check_fw': { client: 'check', hemctl: 'upgrade fw' },
  'GET /api/system/upgrade/install_fw': { client: 'install', hemctl: 'upgrade fw' },
  'POST /api/system/upgrade/install_fw': { client: 'install', hemctl: 'upgrade fw' },
  'POST /api/system/upgrade/upload_ui': { client: 'upload', hemctl: 'upgrade ui' },
  'GET /api/system/upgrade/check_ui': { client: 'check', hemctl: 'upgrade ui' },
  'GET /api/system/upgrade/install_ui': { client: 'install', hemctl: 'upgrade ui' },
  'POST /api/system/backup/passphrase': { client: 'setBackupPassphrase', hemctl: 'backup passphrase' },
  'GET /api/system/backup': { client: 'createBackup', hemctl: 'backup create' },
  'POST /api/system/restore/upload': { client: 'stageRestore', hemctl: 'backup restore' },
  'POST /api/system/restore': { client: 'restore', hemctl: 'backup restore' },
  'GET /api/logger/key': { client: 'logKey', hemctl: 'logs pull' },
  'GET /api/logger/list/:offset': { client: 'logFiles', hemctl: 'logs list' },
  'GET /api/logger/:id': { client: 'logFile', hemctl: 'logs pull' },
  'GET /api/storage/unlock/ro': { client: 'unlockDisk', hemctl: 'disk unlock' },
  'GET /api/storage/unlock/rw': { client: 'unlockDisk', hemctl: 'disk unlock' },
  'GET /api/storage/lock': { client: 'lockDisk', hemctl: 'disk lock' },
  'POST /api/keymgmt/create': { client: 'createKey', hemctl: 'keys create' },
  'POST /api/keymgmt/import': { client: 'importKey', hemctl: 'keys import' },
  'GET /api/keymgmt/list/:offset/:count': { client: 'listKeys', hemctl: 'keys list' },
  'GET /api/keymgmt/get/:kid': { client: 'getKey', hemctl: 'keys get' },
  'DELETE /api/keymgmt/delete/:kid': { client: 'deleteKey', hemctl: 'keys delete' },
  'POST /api/keymgmt/update': { client: 'updateKey', hemctl: 'keys update' },
  'POST /api/keymgmt/search': { client: 'searchKeys', hemctl: 'keys search' },
  'POST /api/keymgmt/derive': { client: 'deriveKey', hemctl: 'keys derive' },
  'POST /api/crypto/cipher/encrypt': { client: 'encrypt', hemctl: 'encrypt' },
  'POST /api/crypto/cipher/decrypt': { client: 'decrypt', hemctl: 'decrypt' },
  'POST /api/crypto/cipher/wrap': { client: 'wrap', hemctl: 'wrap' },
  'POST /api/crypto/cipher/unwrap': { client: 'unwrap', hemctl: 'unwrap' },
  'POST /api/crypto/exdsa/sign': { client: 'sign', hemctl: 'sign' },
  'POST /api/crypto/exdsa/verify': { client: 'verifySignature', hemctl: 'verify' },
  'POST /api/crypto/hmac/hash': { client: 'hmac', hemctl: 'hmac' },
  'POST /api/crypto/hmac/verify': { client: 'hmacVerify', hemctl: 'hmac' },
  'POST /api/crypto/ecdh': { client: 'ecdh', hemctl: 'ecdh' },
  'POST /api/crypto/pqc/mlkem/encaps': { client: 'mlKemEncapsulate', hemctl: 'kem encaps' },
  'POST /api/crypto/pqc/mlkem/decaps': { client: 'mlKemDecapsulate', hemctl: 'kem decaps' },
  'POST /api/crypto/pqc/mldsa/sign': { client: 'mlDsaSign', hemctl: 'sign' },
  'POST /api/crypto/pqc/mldsa/verify': { client: 'mlDsaVerify', hemctl: 'verify' },
}

/**
 * Routes with no method or command of their own, and why. The DIAG build's routes (gateway/diag-routes.ts)
 * and the management app's files (gateway/static-site.ts) are not in the route table at all.
 */
const exempt: Record<string, string> = {
  'GET /api/logger/list': 'the first page of /api/logger/list/:offset: the client always names the offset',
  'GET /api/keymgmt/list': 'the first page of /api/keymgmt/list/:offset/:count, which the client names',
  'GET /api/keymgmt/list/:offset': 'a page of /api/keymgmt/list/:offset/:count, whose count the client names',
  'GET /api/storage/unlock': "/api/storage/unlock/ro or /rw by the token's scope: the client names the mode",
  'GET /api/system/tls':
    "the management app's, which cannot read its TLS session's certificate; a client sees it in the handshake",
}

const routes = routeTable.map((route) => `${route.method} ${route.path}`)

/** Each (method, path) a row of docs/api.md's route table names: `[/:a[/:b]]` optional, `/x` or `x` siblings. */
function documentedRoutes(markdown: string): Set<string> {
  const documented = new Set<string>()
  for (const line of markdown.split('\n')) {
    const [, methods, paths] = line.split('|').map((cell) => cell.trim())
    if (!methods || !paths?.startsWith('`/')) continue
    const [first, ...siblings] = [...paths.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    const base = first!.split('/')
    const named = [
      ...optionalForms(first!),
      ...siblings.map((sibling) => {
        const parts = sibling.replace(/^\//, '').split('/')
        return [...base.slice(0, base.length - parts.length), ...parts].join('/')
      }),
    ]
    for (const method of methods.split(/,\s*/)) for (const path of named) documented.add(`${method} ${path}`)
  }
  return documented
}

/** `/a[/:b[/:c]]` is `/a`, `/a/:b` and `/a/:b/:c`. */
function optionalForms(path: string): string[] {
  const at = path.indexOf('[')
  if (at === -1) return [path]
  const inner = path.slice(at + 1, path.lastIndexOf(']'))
  return [path.slice(0, at), ...optionalForms(inner).map((rest) => path.slice(0, at) + rest)]
}

/** hemctl's exit status and output for `words --help`: 0 and the command's own usage when it exists. */
async function hemctlHelp(words: string): Promise<{ code: number; stdout: string }> {
  let stdout = ''
  const io: HemctlIo = {
    stdout: { write: (text: string | Uint8Array) => (stdout += String(text)) },
    stderr: { write: () => true },
    env: {},
    askSecret: async () => undefined,
    stdin: (async function* () {})(),
    stderrIsTTY: false,
  }
  return { code: await main([...words.split(' '), '--help'], io), stdout }
}

t.test('every route has a client method, a hemctl command and a row in docs/api.md', async (t) => {
  const documented = documentedRoutes(readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8'))
  for (const route of routes) {
    t.ok(documented.has(route), `${route}: a row in docs/api.md`)
    if (route in exempt) continue
    const reach = covered[route]
    if (!t.ok(reach, `${route}: a client method and a hemctl command are named here`)) continue
    t.equal(typeof HemClient.prototype[reach!.client], 'function', `${route}: HemClient.${reach!.client}`)
    const help = await hemctlHelp(reach!.hemctl)
    t.equal(help.code, 0, `${route}: hemctl ${reach!.hemctl}`)
    t.match(help.stdout, new RegExp(`^Usage: hemctl ${reach!.hemctl} `), `${route}: hemctl ${reach!.hemctl}'s usage`)
  }
})

t.test('the lists here name routes of the table, each once', async (t) => {
  for (const route of [...Object.keys(covered), ...Object.keys(exempt)])
    t.ok(routes.includes(route), `${route} is a route of the table`)
  t.same(
    Object.keys(covered).filter((route) => route in exempt),
    [],
    'no route both covered and exempt',
  )
})

t.test('the docs reader: optional segments and siblings', async (t) => {
  const rows = [
    '| GET | `/api/a/list[/:offset[/:count]]` | P | x | y |',
    '| POST, GET | `/api/b/upload_ui`, `check_ui` | P | x | y |',
    '| GET | `/api/c/unlock/ro`, `/unlock/rw` | P | x | y |',
    '| method | path | variants | auth | answer |',
  ]
  t.same([...documentedRoutes(rows.join('\n'))].sort(), [
    'GET /api/a/list',
    'GET /api/a/list/:offset',
    'GET /api/a/list/:offset/:count',
    'GET /api/b/check_ui',
    'GET /api/b/upload_ui',
    'GET /api/c/unlock/ro',
    'GET /api/c/unlock/rw',
    'POST /api/b/check_ui',
    'POST /api/b/upload_ui',
  ])
})

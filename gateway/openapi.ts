import type { Route } from './types.js'
import { DEADLINE_MS, DIAG_SUFFIX, keyOperationScopes } from '../protocol/index.js'
import { MAX_IMAGE_BYTES } from '../image/index.js'

type Json = Record<string, unknown>

const DIAG_ONLY = `DIAG build only (hemd --diag, fwv ending in ${DIAG_SUFFIX}): absent, a 404, from a normal build.`

/** Key operations that cannot fail but for a KID that names no key (404): the rest answer 406 when they fail. */
const KEY_LOOKUPS = new Set(['list', 'get', 'delete', 'search'])

/** The key store's operation behind a route, if it is one. */
function keyOperation(route: Route): string | undefined {
  const { handler } = route
  return handler.kind === 'command' && handler.service === 'keystore' && handler.op in keyOperationScopes
    ? handler.op
    : undefined
}

/**
 * The API as the route table defines it, as an OpenAPI 3.0 document: paths, methods, bearer
 * security, body schemas (TypeBox schemas are JSON Schema) and every status the gateway's rules
 * give a route. hemd's own facts travel as `x-hem-*`: variants, scopes, roles, TLS, fail-state gating.
 */
export function openApiDocument(routes: readonly Route[], version: string): Json {
  const paths: Record<string, Json> = {}
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}')
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) }
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'hemd device API',
      version,
      description:
        'The device-local JSON-over-HTTP API of a hemd hardware security module (variants P and E). ' +
        'The key-management and crypto routes check in this order, first refusal wins: a present but invalid ' +
        'or expired token 401, plain HTTP 418, a fail state or a device not personalised 409, no token 401, ' +
        'a wrong scope or role 403, a malformed body 400, the operation failing 406.',
    },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: { error: { type: 'string', description: 'snake_case code' }, message: { type: 'string' } },
        },
      },
    },
  }
}

function operation(route: Route): Json {
  const params = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }))
  const { handler } = route
  const service = handler.kind === 'read' ? 'read' : handler.kind === 'local' ? 'gateway' : handler.service
  const path = route.path.split('/').slice(2).join('_').replace(/:/g, '')
  return {
    operationId: `${service}_${route.method.toLowerCase()}_${path}`,
    ...(params.length > 0 ? { parameters: params } : {}),
    ...requestBody(route),
    security: security(route),
    responses: responses(route),
    'x-hem-variants': route.variants,
    'x-hem-tls': route.tls,
    ...(route.scopes ? { 'x-hem-scopes': route.scopes } : {}),
    ...(route.roles ? { 'x-hem-roles': route.roles } : {}),
    ...(route.healthy ? { 'x-hem-fail-state-gated': true } : {}),
    ...(route.diag ? { description: DIAG_ONLY, 'x-hem-diag-only': true } : {}),
  }
}

function requestBody(route: Route): Json {
  if (route.handler.kind === 'upload') {
    return {
      requestBody: {
        required: true,
        content: {
          'application/octet-stream': { schema: { type: 'string', format: 'binary', maxLength: MAX_IMAGE_BYTES } },
        },
      },
    }
  }
  if (!route.body) return {}
  return {
    requestBody: {
      required: true,
      content: { 'application/json': { schema: JSON.parse(JSON.stringify(route.body)) as Json } },
    },
  }
}

/** The 409 of a gated route: a key route also needs an owner, and says so before the token's scope. */
function failState(route: Route): string {
  return route.tls === 'required' || route.unreadyFirst
    ? 'the device is in a fail state (fls_state ≠ 0) or not personalised (before the scope is checked)'
    : 'the device is in a fail state (fls_state ≠ 0)'
}

function security(route: Route): Json[] {
  if (route.auth === 'open') return []
  // `token-unless-fresh`: no token while the device is not personalised.
  return route.auth === 'token' ? [{ bearer: [] }] : [{ bearer: [] }, {}]
}

function responses(route: Route): Json {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  })
  const upload = route.handler.kind === 'upload'
  const writes = route.handler.kind === 'command' || upload
  const op = keyOperation(route)
  // crypto-contract §0: the verify endpoints answer success with an empty body.
  const verify = op?.endsWith('verify') === true
  return {
    '200': {
      description:
        route.handler.kind === 'stream'
          ? 'the content, with its Content-Length'
          : verify
            ? 'verified (empty body)'
            : 'done',
    },
    ...(route.body || route.handler.kind === 'upload' || route.path.includes(':')
      ? { '400': error('malformed request') }
      : {}),
    '401': error('a present but invalid or expired token, or a missing one where a token is needed'),
    ...(route.scopes || route.roles
      ? { '403': error('the token scope or role does not permit this request (journaled FAILED_SCOPE_CHECK)') }
      : route.needsClock
        ? { '403': error('the device clock is not set') }
        : {}),
    ...(route.path.includes(':') || op === 'update' ? { '404': error('no such resource') } : {}),
    ...(route.fails ? { '406': error(route.fails) } : {}),
    ...(op !== undefined && !KEY_LOOKUPS.has(op)
      ? {
          '406': error(
            verify
              ? 'the signature or MAC does not verify, or the key cannot be used (unknown kid, wrong type)'
              : 'the operation failed (an unusable or unknown key, a duplicate, a full repository)',
          ),
        }
      : {}),
    ...(route.body || upload
      ? { '408': error('the body did not arrive within http_option_dosprot_mode × 500 ms (when set)') }
      : {}),
    ...(route.healthy || upload
      ? {
          '409': error(
            [
              ...(route.healthy ? [failState(route)] : []),
              ...(upload ? ['an upload, check or install of this kind is running (`busy`)'] : []),
            ].join('; or '),
          ),
        }
      : {}),
    ...(upload ? { '411': error('no Content-Length (chunked encoding is not accepted)') } : {}),
    '412': error('the request Origin is not allowed'),
    ...(route.body ? { '413': error('body above the limit') } : {}),
    ...(upload ? { '413': error('above the image limit, or no filename') } : {}),
    ...(route.tls === 'required' ? { '418': error('served over HTTPS only') } : {}),
    ...(route.tooManyRequests ? { '429': error(route.tooManyRequests) } : {}),
    '503': error('a device service is not reachable, or the device is stopping; try again'),
    ...(route.handler.kind === 'read' || route.handler.kind === 'local'
      ? {}
      : {
          '504': error(
            'the operation did not finish within its deadline ' +
              `(${DEADLINE_MS[route.deadline ?? 'short'] / 1000} s per command); it may still complete`,
          ),
        }),
    ...(writes ? { '507': error('the device has no room left to store this') } : {}),
  }
}

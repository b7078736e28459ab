/** The scopes each key operation accepts (any one of them); the gateway's key routes take theirs from here. */
export const keyOperationScopes = {
  create: ['keymgmt:gen'],
  import: ['keymgmt:imp'],
  derive: ['keymgmt:derive', 'keymgmt:gen'],
  list: ['keymgmt:list'],
  get: ['keymgmt:get', 'keymgmt:use:<kid>'],
  delete: ['keymgmt:del'],
  update: ['keymgmt:upd'],
  search: ['keymgmt:search'],
  encrypt: ['keymgmt:use:<kid>'],
  decrypt: ['keymgmt:use:<kid>'],
  sign: ['keymgmt:use:<kid>'],
  verify: ['keymgmt:use:<kid>'],
  hmac: ['keymgmt:use:<kid>'],
  hmac_verify: ['keymgmt:use:<kid>'],
  ecdh: ['keymgmt:use:<kid>'],
  wrap: ['keymgmt:use:<kid>'],
  unwrap: ['keymgmt:use:<kid>'],
  mlkem_encaps: ['keymgmt:use:<kid>'],
  mlkem_decaps: ['keymgmt:use:<kid>'],
  mldsa_sign: ['keymgmt:use:<kid>'],
  mldsa_verify: ['keymgmt:use:<kid>'],
} as const satisfies Record<string, readonly string[]>

export type KeyOperation = keyof typeof keyOperationScopes

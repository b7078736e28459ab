/** The scopes each key operation accepts (any one of them); the gateway's key routes take theirs from here. */
export const keyOperationScopes = {
  create: ['keymgmt:gen'],
  import: ['keymgmt:imp'],
  list: ['keymgmt:list'],
  get: ['keymgmt:get', 'keymgmt:use:<kid>'],
  delete: ['keymgmt:del'],
  update: ['keymgmt:upd'],
  search: ['keymgmt:search'],
  encrypt: ['keymgmt:use:<kid>'],
  decrypt: ['keymgmt:use:<kid>'],
} as const satisfies Record<string, readonly string[]>

export type KeyOperation = keyof typeof keyOperationScopes

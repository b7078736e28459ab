/** The longest scope a login may ask for, in bytes: the family's form, printable ASCII only. */
export const LOGIN_SCOPE_MAX_BYTES = 255

const FORM = new RegExp(`^[\\x21-\\x7e]{1,${LOGIN_SCOPE_MAX_BYTES}}$`)

/**
 * Whether a login may ask for `scope`: 1–255 printable ASCII characters, no space (the family's
 * form). Whether it names anything is not asked: the family mints a token for any such scope (its
 * certification logs in with `system:wrong`), and what the token opens is the access rules'
 * matching alone, so one that names nothing opens nothing.
 */
export function isLoginScope(scope: unknown): scope is string {
  return typeof scope === 'string' && FORM.test(scope)
}

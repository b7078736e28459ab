// The public face of cli/hem-authenticator/: what other folders may use of it.
export { main } from './authenticator-cli.js'
export type { AuthenticatorIo } from './context.js'
export { lineReader } from './line-reader.js'

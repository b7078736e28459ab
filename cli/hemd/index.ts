// The public face of cli/hemd/: what other folders may use of it.
export { main } from './hemd-cli.js'

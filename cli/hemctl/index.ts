// The public face of cli/hemctl/: what other folders may use of it.
export { main } from './cli.js'

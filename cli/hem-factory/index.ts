// The public face of cli/hem-factory/: what other folders may use of it.
export { main } from './factory-cli.js'

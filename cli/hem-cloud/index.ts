// The public face of cli/hem-cloud/: what other folders may use of it.
export { main } from './cloud-cli.js'

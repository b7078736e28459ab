// The public face of cli/hem-image/: what other folders may use of it.
export { main } from './image-cli.js'

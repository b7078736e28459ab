export { fromBase64, toBase64, toBase64Url } from '../protocol/web-base64.js'

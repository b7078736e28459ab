export { fromBase64, toBase64, toBase64Url } from '../protocol/browser.js'

// The public face of authenticator/: all of it is free of node, so it is browser.ts's.
export * from './browser.js'

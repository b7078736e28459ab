import { createSecureContext, type SecureContext } from 'node:tls'

let context: SecureContext | undefined

/**
 * One TLS client context for every connection a test process makes to a device: without it each
 * connection builds its own, the CA store loaded again (about 0.4 ms of CPU, thousands of times in
 * a fuzz run). The device's self-signed certificate is accepted by `rejectUnauthorized: false`.
 */
export const clientContext = (): SecureContext => (context ??= createSecureContext())

// What the device tells its app of itself (`/app-config.json`): only hemd's operator sets it, never a page.
import { deviceRequest } from './device-session.js'

export interface AppConfig {
  /** The family's cloud (hemd --cloud), an absolute URL. */
  cloud?: string
  /** The device's HTTPS listener. */
  httpsPort?: number
}

let read: Promise<AppConfig> | undefined

/** Read once per page; a failed read is tried again at the next call. */
export function appConfig(): Promise<AppConfig> {
  read ??= deviceRequest('/app-config.json').then((answer) => {
    const { cloud, https_port: port } = (answer ?? {}) as Record<string, unknown>
    return {
      ...(typeof cloud === 'string' ? { cloud } : {}),
      ...(typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536 ? { httpsPort: port } : {}),
    }
  })
  read.catch(() => (read = undefined))
  return read
}

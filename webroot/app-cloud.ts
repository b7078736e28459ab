// The family's cloud this device's owner uses, as the device tells its app (`/app-config.json`, from hemd
// --cloud): the page never takes it from anyone else, and the device's CSP lets the page reach that origin only.
import { BrokerClient } from '../client/browser.js'
import { appConfig } from './app-config.js'

/** What the page says where a cloud is needed and the device names none. */
export const NO_CLOUD =
  'No cloud is configured for this device: start hemd with --cloud URL (your hem-cloud) to pair phones and ' +
  'approve logins on them.'

/** The broker of the device's cloud, or undefined when it names none. */
export async function appCloud(): Promise<BrokerClient | undefined> {
  const { cloud } = await appConfig()
  return cloud === undefined ? undefined : new BrokerClient({ url: cloud })
}

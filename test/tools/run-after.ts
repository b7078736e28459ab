// tap's `after` (.taprc): the run's browser stopped (test/helpers/shared-chromium.ts), and its device
// identities and passphrase seeds removed (test/helpers/shared-identity.ts).
import { rm } from 'node:fs/promises'
import { stopSharedChromium } from '../helpers/shared-chromium.js'
import { SHARED_IDENTITY_DIR } from '../helpers/shared-identity.js'

await stopSharedChromium()
await rm(SHARED_IDENTITY_DIR, { recursive: true, force: true })

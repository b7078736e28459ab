// tap's `before` (.taprc): the run's one browser (test/helpers/shared-chromium.ts), and no device
// identity or seed left of an earlier run (test/helpers/shared-identity.ts).
import { rm } from 'node:fs/promises'
import { startSharedChromium } from '../helpers/shared-chromium.js'
import { SHARED_IDENTITY_DIR } from '../helpers/shared-identity.js'

await rm(SHARED_IDENTITY_DIR, { recursive: true, force: true })
await startSharedChromium()

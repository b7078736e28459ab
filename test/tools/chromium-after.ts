// tap's `after` (.taprc): the run's browser stopped (test/helpers/shared-chromium.ts).
import { stopSharedChromium } from '../helpers/shared-chromium.js'

await stopSharedChromium()

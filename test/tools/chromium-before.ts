// tap's `before` (.taprc): the run's one browser (test/helpers/shared-chromium.ts).
import { startSharedChromium } from '../helpers/shared-chromium.js'

await startSharedChromium()

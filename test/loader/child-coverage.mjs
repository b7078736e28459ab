// The processes a test starts (hemd, its services, the bench, the CLIs) report their coverage through
// V8's own NODE_V8_COVERAGE, into the folder tap's report reads, rather than through tap's loader
// (@tapjs/processinfo), which tap adds to every spawn's NODE_OPTIONS: a child that loads the device
// costs 0.8–0.9 s of CPU that way, against 2.5–2.7 s with tap's loader, whose hooks see every module
// it loads. Both write V8's coverage with the source maps the report maps back to the sources.
// This runs on each spawn after tap's own listener (process-on-spawn calls them in order).
import { join } from 'node:path'
import processOnSpawn from 'process-on-spawn'

const TAP_LOADER = /(^|\s)"?--(import|loader|experimental-loader)[= ]\S*@tapjs\/processinfo\S*"?/g
const root = process.env._TAPJS_PROCESSINFO_CWD_

if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '1' && root) {
  const coverage = join(root, '.tap', 'coverage')
  processOnSpawn.addListener((spawned) => {
    const env = { ...spawned.env, NODE_V8_COVERAGE: coverage }
    const options = (env.NODE_OPTIONS ?? '').replace(TAP_LOADER, '').trim()
    if (options) env.NODE_OPTIONS = options
    else delete env.NODE_OPTIONS
    spawned.env = env
  })
}

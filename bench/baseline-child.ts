// A baseline's own process (see baseline-process.ts): serves one baseline, sends its port to the
// parent over IPC, and stops when told to or when the parent goes away.
import { serveBusBaseline } from './baseline-bus.js'
import { serveCannedBaseline } from './baseline-canned.js'
import { serveCryptoBaseline } from './baseline-crypto.js'
import { serveDownloadBaseline, serveUploadBaseline } from './baseline-files.js'
import { serveGetBaseline } from './baseline-get.js'
import { servePrimitivesBaseline } from './baseline-primitives.js'
import type { BaselineConfig } from './baseline-process.js'
import type { ListeningServer } from './types.js'

const config = JSON.parse(process.argv[2] ?? '{}') as BaselineConfig

function serve(): Promise<ListeningServer> {
  switch (config.kind) {
    case 'crypto':
      return serveCryptoBaseline(config.tls, config.keys!)
    case 'primitives':
      return servePrimitivesBaseline(config.tls)
    case 'bus':
      return serveBusBaseline(config.tls, config.workDir)
    case 'get':
      return serveGetBaseline(config.tls)
    case 'download':
      return serveDownloadBaseline(config.tls, config.file!)
    case 'upload':
      return serveUploadBaseline(config.tls, config.workDir)
    case 'canned':
      return serveCannedBaseline(config.tls, config.answers!)
  }
}

const server = await serve()
// Stopped cleanly either way: the bus baseline's nats-server runs in a process group of its own
// and would outlive an abrupt exit.
let stopping = false
const stop = (): void => {
  if (stopping) return
  stopping = true
  server.close().finally(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('disconnect', stop)
process.send!({ port: server.port })

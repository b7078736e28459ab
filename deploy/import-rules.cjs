// The import rules, as data: read by .dependency-cruiser.cjs (the rules) and deploy/check-imports.mjs (unit cycles).

/** Imports flow one way: each folder names the folders of ours it may import. */
const may = {
  protocol: [],
  hal: [],
  // This process's instruments (prom-client): below everything that counts something.
  metrics: [],
  machines: ['protocol'],
  client: ['protocol'],
  eventstore: ['protocol', 'hal', 'metrics'],
  bus: ['protocol', 'hal', 'metrics'],
  image: ['protocol', 'hal'],
  audit: ['protocol', 'hal', 'machines', 'eventstore', 'bus', 'client'],
  factory: ['protocol', 'hal'],
  actors: ['protocol', 'hal', 'metrics', 'machines', 'eventstore', 'bus', 'image'],
  gateway: ['protocol', 'hal', 'metrics', 'bus', 'image'],
  runtime: ['protocol', 'hal', 'metrics', 'machines', 'eventstore', 'bus', 'image', 'actors', 'gateway'],
  // The family's cloud: a service of its own, sharing only the wire formats, the HAL's x509 and the bus's nats-server.
  cloud: ['protocol', 'hal', 'bus'],
  // The external authenticator's protocol core: browser-safe, for its CLI and its web page.
  authenticator: ['protocol'],
  cli: ['protocol', 'hal', 'metrics', 'machines', 'eventstore', 'bus', 'image', 'client', 'audit', 'factory'].concat([
    'actors',
    'gateway',
    'runtime',
    'cloud',
    'authenticator',
  ]),
  bin: ['cli'],
  webroot: ['protocol', 'hal', 'eventstore', 'image', 'client', 'audit', 'authenticator'],
  // The web authenticator, the page hem-cloud serves: the authenticator's core and the client's text helpers.
  authapp: ['protocol', 'authenticator', 'client'],
}

/**
 * A unit's faces, the only files other folders may import: index.ts, and browser.ts where the unit
 * has code free of node for the management app (webroot/) and what it bundles.
 */
const faces = ['index.ts', 'browser.ts']

/** Folders whose code runs in a browser: they use other units through browser.ts only. */
const browser = ['webroot', 'authapp']

/** Every folder of code: the ones with rules, and those that may import anything (but not be imported). */
const folders = Object.keys(may).concat(['bench', 'deploy', 'test'])

/** Folders whose every subfolder is a unit of its own (an actor, an executable). */
const grouped = ['actors', 'cli']

/** A file's unit: a top-level folder, or one folder of actors/ or cli/. */
function unitOf(file) {
  const parts = file.split('/')
  return grouped.includes(parts[0]) && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]
}

module.exports = { may, folders, grouped, unitOf, faces, browser }

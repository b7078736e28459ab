// The import rules, as data: read by .dependency-cruiser.cjs (the rules) and deploy/check-imports.mjs (unit cycles).

/** Imports flow one way: each folder names the folders of ours it may import. */
const may = {
  protocol: [],
  hal: [],
  machines: ['protocol'],
  client: ['protocol'],
  eventstore: ['protocol', 'hal'],
  bus: ['protocol', 'hal'],
  image: ['protocol', 'hal'],
  audit: ['protocol', 'hal', 'machines', 'eventstore', 'bus', 'client'],
  factory: ['protocol', 'hal'],
  actors: ['protocol', 'hal', 'machines', 'eventstore', 'bus', 'image'],
  gateway: ['protocol', 'hal', 'bus', 'image'],
  runtime: ['protocol', 'hal', 'machines', 'eventstore', 'bus', 'image', 'actors', 'gateway'],
  cli: ['protocol', 'hal', 'machines', 'eventstore', 'bus', 'image', 'client', 'audit', 'factory', 'actors'].concat([
    'gateway',
    'runtime',
  ]),
  bin: ['cli'],
}

/**
 * Files of a unit that other folders may import besides its index.ts: free of node, they are what
 * the management app's journal check and timeline (webroot/audit/) and its image check bundle,
 * where an index.ts would bring node:crypto.
 */
const browserFaces = {
  protocol: ['journal.ts', 'log-type-names.ts', 'device.ts', 'tls-transport-key.ts'],
  eventstore: ['extension-data.ts'],
}

/** Every folder of code: the ones with rules, and those that may import anything (but not be imported). */
const folders = Object.keys(may).concat(['bench', 'deploy', 'test'])

/** Folders whose every subfolder is a unit of its own (an actor, an executable). */
const grouped = ['actors', 'cli']

/** A file's unit: a top-level folder, or one folder of actors/ or cli/. */
function unitOf(file) {
  const parts = file.split('/')
  return grouped.includes(parts[0]) && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]
}

module.exports = { may, folders, grouped, unitOf, browserFaces }

// Imports flow one way: bin -> cli -> runtime -> gateway/actors -> audit/client/image/bus/eventstore/machines/hal -> protocol.
// Each folder names the folders of ours it may import; anything else, and any cycle, fails `npm run lint`.
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
  cli: [
    'protocol',
    'hal',
    'machines',
    'eventstore',
    'bus',
    'image',
    'client',
    'audit',
    'factory',
    'actors',
    'gateway',
    'runtime',
  ],
  bin: ['cli'],
}
const fs = require('node:fs')
// A unit is a top-level folder, or one folder of actors/ or cli/; others use it only through its index.ts.
const grouped = ['actors', 'cli']
const units = Object.keys(may)
  .filter((f) => f !== 'bin')
  .flatMap((f) =>
    grouped.includes(f)
      ? [
          f,
          ...fs
            .readdirSync(f, { withFileTypes: true })
            .filter((d) => d.isDirectory())
            .map((d) => `${f}/${d.name}`),
        ]
      : [f],
  )
const esc = (s) => s.replace(/[/.]/g, '\\$&')
const unitFiles = (unit) => (grouped.includes(unit) ? `^${esc(unit)}/[^/]+$` : `^${esc(unit)}/`)
const ours = [
  'protocol',
  'hal',
  'machines',
  'client',
  'eventstore',
  'bus',
  'image',
  'audit',
  'factory',
  'actors',
  'gateway',
  'runtime',
  'cli',
  'bin',
  'bench',
  'deploy',
  'test',
]

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle, type-only ones included: two modules that can only be understood together.',
      from: {},
      to: { circular: true },
    },
    ...Object.entries(may).map(([folder, allowed]) => ({
      name: `${folder}-imports`,
      severity: 'error',
      comment: `${folder}/ may import only ${allowed.length ? allowed.join(', ') : 'nothing of ours'} (docs/architecture.md).`,
      from: { path: `^${folder}/` },
      to: { path: `^(${ours.filter((f) => f !== folder && !allowed.includes(f)).join('|')})/` },
    })),
    ...units.map((unit) => ({
      name: `${unit}-through-index`,
      severity: 'error',
      comment: `Other folders use ${unit}/ through its index.ts, its public face (a lazy import() may reach inside).`,
      from: {
        path: '^(protocol|hal|machines|client|eventstore|bus|image|audit|factory|actors|gateway|runtime|cli|bin|bench|deploy)/',
        pathNot: unitFiles(unit),
      },
      to: { path: unitFiles(unit), pathNot: `^${esc(unit)}/index\\.ts$`, dependencyTypesNot: ['dynamic-import'] },
    })),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
  },
}

// Imports flow one way (deploy/import-rules.cjs names what each folder may import); anything else, and any
// cycle, fails `npm run lint`.
const { may, folders, grouped, browserFaces } = require('./deploy/import-rules.cjs')
const fs = require('node:fs')
// Other units use a unit (deploy/import-rules.cjs) only through its index.ts.
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
      comment: `${folder}/ may import only ${allowed.join(', ') || 'nothing of ours'} (docs/architecture.md).`,
      from: { path: `^${folder}/` },
      to: { path: `^(${folders.filter((f) => f !== folder && !allowed.includes(f)).join('|')})/` },
    })),
    ...units.map((unit) => ({
      name: `${unit}-through-index`,
      severity: 'error',
      comment: `Other folders use ${unit}/ through its index.ts, its public face (a lazy import() may reach inside).`,
      from: {
        path: `^(${folders.filter((f) => f !== 'test').join('|')})/`,
        pathNot: unitFiles(unit),
      },
      to: {
        path: unitFiles(unit),
        pathNot: `^${esc(unit)}/(${['index.ts', ...(browserFaces[unit] ?? [])].map(esc).join('|')})$`,
        dependencyTypesNot: ['dynamic-import'],
      },
    })),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
  },
}

// Imports flow one way (deploy/import-rules.cjs names what each folder may import); anything else, and any
// cycle, fails `npm run lint`.
const { may, folders, grouped, faces, browser } = require('./deploy/import-rules.cjs')
const fs = require('node:fs')
const { builtinModules } = require('node:module')
// Other units use a unit (deploy/import-rules.cjs) only through its faces.
const units = Object.keys(may)
  .filter((f) => f !== 'bin' && !browser.includes(f))
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
      name: `${unit}-through-face`,
      severity: 'error',
      comment: `Other folders use ${unit}/ through its faces, ${faces.join(' or ')} (a lazy import() may reach in).`,
      from: {
        path: `^(${folders.filter((f) => f !== 'test').join('|')})/`,
        pathNot: unitFiles(unit),
      },
      to: {
        path: unitFiles(unit),
        pathNot: `^${esc(unit)}/(${faces.map(esc).join('|')})$`,
        dependencyTypesNot: ['dynamic-import'],
      },
    })),
    ...browser.map((folder) => ({
      name: `${folder}-browser-faces`,
      severity: 'error',
      comment: `${folder}/ runs in a browser: it uses other units through browser.ts, whose code is free of node.`,
      from: { path: `^${folder}/` },
      to: { path: `^(${units.map(esc).join('|')})/index\\.ts$` },
    })),
    {
      name: 'browser-faces-free-of-node',
      severity: 'error',
      comment: 'What webroot/ and a browser.ts reach runs in the management app: no node module, not even a type.',
      from: { path: `^(${browser.map(esc).join('|')})/|^(${units.map(esc).join('|')})/browser\\.ts$` },
      to: { reachable: true, path: `^(${builtinModules.map(esc).join('|')})$` },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
  },
}

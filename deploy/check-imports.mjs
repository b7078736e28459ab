// `npm run lint`'s import check: dependency-cruiser's rules (.dependency-cruiser.cjs), then the
// cycles it cannot see, those between units (a top-level folder, or one folder of actors/ or cli/),
// and the faces: a folder's index.ts only re-exports, so what a unit shows is never code of its own.
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const { folders, unitOf } = createRequire(import.meta.url)('./import-rules.cjs')
export { unitOf }

const DEPCRUISE = fileURLToPath(new URL('../node_modules/.bin/depcruise', import.meta.url))
const CONFIG = fileURLToPath(new URL('../.dependency-cruiser.cjs', import.meta.url))

/** Every cycle of the unit graph, each as the list of units around it (Tarjan's strongly connected components). */
export function unitCycles(modules) {
  const edges = new Map()
  for (const module of modules) {
    const from = unitOf(module.source)
    for (const dep of module.dependencies) {
      if (dep.coreModule || dep.couldNotResolve || dep.resolved.startsWith('node_modules/')) continue
      const to = unitOf(dep.resolved)
      if (to === from || from === 'test' || to === 'test') continue
      if (!edges.has(from)) edges.set(from, new Set())
      edges.get(from).add(to)
    }
  }
  const index = new Map()
  const low = new Map()
  const stack = []
  const cycles = []
  let next = 0
  const visit = (unit) => {
    index.set(unit, next)
    low.set(unit, next++)
    stack.push(unit)
    for (const to of edges.get(unit) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(unit, Math.min(low.get(unit), low.get(to)))
      } else if (stack.includes(to)) low.set(unit, Math.min(low.get(unit), index.get(to)))
    }
    if (low.get(unit) !== index.get(unit)) return
    const component = []
    let member
    do {
      member = stack.pop()
      component.push(member)
    } while (member !== unit)
    if (component.length > 1) cycles.push(component.sort())
  }
  for (const unit of edges.keys()) if (!index.has(unit)) visit(unit)
  return cycles
}

export function checkImports(cwd = process.cwd(), scope = folders) {
  const run = spawnSync(DEPCRUISE, ['--config', CONFIG, '--output-type', 'json', ...scope], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  })
  if (!run.stdout) throw new Error(`dependency-cruiser failed: ${run.stderr}`)
  const result = JSON.parse(run.stdout)
  const problems = result.summary.violations.map((v) =>
    v.cycle
      ? `${v.rule.name}: ${[v.from, ...v.cycle.map((c) => c.name ?? c)].join(' -> ')}`
      : `${v.rule.name}: ${v.from} -> ${v.to}`,
  )
  for (const cycle of unitCycles(result.modules)) problems.push(`unit cycle: ${cycle.join(', ')}`)
  return { problems, modules: result.modules.length }
}

/** Each statement of an index.ts that is not an import or a re-export, as `file:line: its first line`. */
export function faceProblems(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  return source.statements
    .filter((s) => !ts.isImportDeclaration(s) && !ts.isExportDeclaration(s))
    .map((s) => {
      const line = source.getLineAndCharacterOfPosition(s.getStart(source)).line + 1
      return `${file}:${line}: ${s.getText(source).split('\n')[0]}`
    })
}

/** The index.ts files of a checkout's code that hold more than imports and re-exports. */
export function checkFaces(cwd = process.cwd()) {
  const faces = execFileSync('git', ['ls-files', 'index.ts', '**/index.ts'], { cwd, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && !file.startsWith('test/') && !file.includes('node_modules/'))
  return faces.flatMap((file) => faceProblems(file, readFileSync(join(cwd, file), 'utf8')))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { problems, modules } = checkImports()
  for (const problem of problems) console.error(`import rule broken: ${problem}`)
  const faces = checkFaces()
  for (const face of faces) console.error(`index.ts holds code, not only re-exports: ${face}`)
  console.log(
    `imports: ${modules} modules, ${problems.length} problem(s); ${faces.length} index.ts statement(s) of code`,
  )
  process.exitCode = problems.length + faces.length > 0 ? 1 : 0
}

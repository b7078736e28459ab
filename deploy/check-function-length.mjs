// `npm run lint`'s function check: a function of more than LIMIT lines holds more than one concept, unless a
// `// long: <reason>` comment just above it says why it may not be split.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

export const LIMIT = 80
const EXEMPT = /^\/\/\s*long:\s*\S/

/** A function's name as a reader finds it: its own, or that of the variable, property or class member it is. */
function nameOf(node) {
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  if (node.name) return node.name.getText()
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText()
  if (ts.isPropertyDeclaration(parent)) return parent.name.getText()
  return '<anonymous>'
}

/** The nodes whose leading comments may hold the exemption: the function, and what it is the value of. */
function carriers(node) {
  const parent = node.parent
  if (ts.isVariableDeclaration(parent)) return [node, parent, parent.parent.parent]
  if (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return [node, parent]
  if (ts.isExportAssignment(parent)) return [node, parent]
  return [node]
}

function exempt(node, text) {
  return carriers(node).some((carrier) =>
    (ts.getLeadingCommentRanges(text, carrier.getFullStart()) ?? []).some((range) =>
      EXEMPT.test(text.slice(range.pos, range.end)),
    ),
  )
}

/** Every function of a TypeScript source longer than `limit` lines and not exempted. */
export function longFunctions(file, text, limit = LIMIT) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found = []
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = last - first + 1
      if (lines > limit && !exempt(node, text)) found.push({ file, line: first + 1, name: nameOf(node), lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The git-tracked sources of a checkout (tests and dependencies aside). */
export function sources(cwd = process.cwd()) {
  return execFileSync('git', ['ls-files', '*.ts'], { cwd, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && !file.startsWith('test/') && !file.includes('node_modules/') && !file.endsWith('.d.ts'))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = sources()
  const long = files.flatMap((file) => longFunctions(file, readFileSync(join(process.cwd(), file), 'utf8')))
  for (const f of long) console.error(`${f.file}:${f.line}: ${f.name} has ${f.lines} lines (no "// long: <reason>")`)
  console.log(`functions: ${files.length} files, ${long.length} longer than ${LIMIT} lines`)
  process.exitCode = long.length > 0 ? 1 : 0
}

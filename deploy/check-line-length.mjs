// `npm run lint`'s line check: prettier wraps code at 120 columns but cannot break a string literal,
// so a long literal would pass `prettier --check`; the limit holds for every line of code.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const LIMIT = 120
const files = execFileSync('git', ['ls-files', '*.ts', '*.mjs', '*.cjs'], { encoding: 'utf8' })
  .split('\n')
  .filter(Boolean)
const long = files.flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, i) => ([...line].length > LIMIT ? [`${file}:${i + 1}: ${[...line].length} characters`] : [])),
)
for (const line of long) console.error(line)
console.log(`lines: ${files.length} files, ${long.length} longer than ${LIMIT} characters`)
process.exitCode = long.length > 0 ? 1 : 0

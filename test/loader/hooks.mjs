// Tests run their TypeScript through esbuild rather than tap's ts-node: each of the ~100 test
// processes transpiles most of the device, and ts-node's start-up cost was about 2 s per file.
// Type checking is `npm run typecheck`'s job, as it was with ts-node's transpile-only mode.
import { transform } from 'esbuild'
import { fileURLToPath } from 'node:url'

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    // Sources import each other by their compiled names (`./x.js`), as NodeNext requires.
    const path = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:')
    if (path && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      return nextResolve(`${specifier.slice(0, -3)}.ts`, context)
    }
    throw error
  }
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts') || url.includes('/node_modules/')) return nextLoad(url, context)
  const { source } = await nextLoad(url, { ...context, format: 'module' })
  const { code } = await transform(String(source), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcefile: fileURLToPath(url),
  })
  return { format: 'module', source: code, shortCircuit: true }
}

import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { signBuild } from '../image/index.js'

// Runs from dist/deploy/: the build is dist/, the package and the vendor key are at the top.
const dist = fileURLToPath(new URL('..', import.meta.url))
const top = fileURLToPath(new URL('../..', import.meta.url))
const { version } = JSON.parse(await readFile(`${top}package.json`, 'utf8')) as { version: string }
const keyPem = await readFile(process.env.HEMD_VENDOR_KEY ?? `${top}deploy/keys/vendor-dev.pem`, 'utf8')
// A firmware slot holds the build alone, away from the package: it must say itself that it is ESM.
await writeFile(`${dist}package.json`, `${JSON.stringify({ type: 'module' })}\n`)
const manifest = await signBuild(dist, version, keyPem)
console.log(`signed build ${manifest.version} sha256 ${manifest.sha256.slice(0, 16)}…`)

// `npm run openapi`: writes deploy/openapi.json from the gateway's route table.
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { openApiDocument } from '../gateway/index.js'
import { routeTable } from '../gateway/index.js'

const repo = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '..' : '../..', import.meta.url))
const { version } = JSON.parse(await readFile(`${repo}/package.json`, 'utf8')) as { version: string }
await writeFile(`${repo}/deploy/openapi.json`, `${JSON.stringify(openApiDocument(routeTable, version), null, 2)}\n`)

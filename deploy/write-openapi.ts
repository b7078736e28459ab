// `npm run openapi`: writes deploy/openapi.json and docs/routes.md from the gateway's route table.
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { openApiDocument, routeTable } from '../gateway/index.js'
import { routeReference } from './route-reference.js'

const repo = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '..' : '../..', import.meta.url))
const { version } = JSON.parse(await readFile(`${repo}/package.json`, 'utf8')) as { version: string }
const document = openApiDocument(routeTable, version)
await writeFile(`${repo}/deploy/openapi.json`, `${JSON.stringify(document, null, 2)}\n`)
await writeFile(`${repo}/docs/routes.md`, routeReference(document as Parameters<typeof routeReference>[0]))

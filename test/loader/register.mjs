import { register } from 'node:module'
import './child-coverage.mjs'

register('./hooks.mjs', import.meta.url)

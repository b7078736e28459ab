// Every screen of the app, in the navigation's order; the first is the one after login.
import type { View } from '../view.js'
import { auditView } from './audit-view.js'
import { dashboardView } from './dashboard-view.js'
import { healthView } from './health-view.js'
import { keysView } from './keys-view.js'
import { settingsView } from './settings-view.js'
import { upgradesView } from './upgrades-view.js'

export const VIEWS: readonly View[] = [dashboardView, keysView, auditView, settingsView, upgradesView, healthView]

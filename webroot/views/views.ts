// Every screen of the app, in the navigation's order; the first is the one after login. A screen's code is a chunk
// of its own (deploy/build-webroot.ts), fetched the first time it shows: the login needs none of it.
import type { ViewLink } from '../view.js'

export const VIEWS: readonly ViewLink[] = [
  { path: 'dashboard', title: 'Dashboard', load: async () => (await import('./dashboard-view.js')).dashboardView },
  { path: 'keys', title: 'Keys', load: async () => (await import('./keys-view.js')).keysView },
  { path: 'audit', title: 'Audit log', load: async () => (await import('./audit-view.js')).auditView },
  { path: 'settings', title: 'Settings', load: async () => (await import('./settings-view.js')).settingsView },
  { path: 'upgrades', title: 'Upgrades', load: async () => (await import('./upgrades-view.js')).upgradesView },
  { path: 'health', title: 'Health', load: async () => (await import('./health-view.js')).healthView },
]

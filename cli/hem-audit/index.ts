// The public face of cli/hem-audit/: what other folders may use of it.
export { main } from './audit-cli.js'
export { HEAD_FILE, KEY_FILE } from './audit-fetch.js'
export { AuditFinding } from './audit-finding.js'
export type { InputLoader } from './audit-input.js'
export { runTimeline } from './audit-timeline.js'
export { runVerify } from './audit-verify.js'

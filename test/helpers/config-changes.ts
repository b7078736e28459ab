import type { Test } from 'tap'
import { call } from './http.js'
import { bearer } from './owner.js'

let changes = 0

/** Journal activity: `times` configuration changes (a new email each), each answered 200. */
export async function configChanges(t: Test, base: string, token: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const answer = await call(`${base}/api/system/config`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ email: `ada+${++changes}@example.com` }),
    })
    t.equal(answer.status, 200, `a configuration change: ${answer.text}`)
  }
}

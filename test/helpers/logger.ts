import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'

/** Silent, unless HEM_TEST_LOG names a level: then each test process logs to hemd-test-<pid>.log in the temp dir. */
export const silentLogger = process.env.HEM_TEST_LOG
  ? pino(
      { level: process.env.HEM_TEST_LOG },
      pino.destination({ dest: join(tmpdir(), `hemd-test-${process.pid}.log`), sync: true }),
    )
  : pino({ level: 'silent' })

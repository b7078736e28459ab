// The gateway's bus user may send exactly the commands behind routes: with only its credentials,
// no operation that no route leads to (a trial boot's confirmation, a check-in order) can be sent.
// The DIAG build's routes count: their operations are permitted, and answered only under --diag.
import t from 'tap'
import { services } from '../bus/services.js'
import { routeTable } from '../gateway/routes.js'
import { diagRoutes } from '../gateway/diag-routes.js'
import { TlsBreaker } from '../gateway/tls-breaker.js'
import { silentLogger } from './helpers/logger.js'

const UPLOAD_STEPS = ['upload_chunk', 'upload_end', 'upload_abort']

function routeCommands(): Set<string> {
  const commands = new Set<string>()
  for (const { handler } of [...routeTable, ...diagRoutes(new TlsBreaker(silentLogger))]) {
    if (handler.kind === 'command') commands.add(`${handler.service}.${handler.op}`)
    if (handler.kind === 'stream') [handler.op, handler.chunk].forEach((op) => commands.add(`${handler.service}.${op}`))
    if (handler.kind === 'upload')
      [handler.begin, ...UPLOAD_STEPS].forEach((op) => commands.add(`${handler.service}.${op}`))
  }
  return commands
}

const gateway = services.find((spec) => spec.name === 'gateway')!
const permitted = (command: string) =>
  !gateway.denies?.includes(command) && gateway.calls.some((call) => call === command || call === command.split('.')[0])

t.test('every command a route sends is permitted', async (t) => {
  const commands = [...routeCommands()]
  t.ok(commands.length > 30, `${commands.length} commands`)
  t.same(
    commands.filter((command) => !permitted(command)),
    [],
  )
})

t.test('the operations the gateway may send one by one are each behind a route', async (t) => {
  const commands = routeCommands()
  t.same(
    gateway.calls.filter((call) => call.includes('.') && !commands.has(call)),
    [],
  )
})

t.test('what no route leads to is not permitted', async (t) => {
  for (const command of [
    'upgrade.confirm',
    'system.checkin',
    'system.sim',
    'supervisor.restart',
    'eventstore.append',
    'keystore.verify_records',
  ]) {
    t.notOk(permitted(command), command)
  }
})

// The one serial queue the actors, the bus and the runtime share: tasks one at a time, in order,
// and a failing task does not poison the ones after it.
import t from 'tap'
import { SerialQueue } from '../protocol/serial-queue.js'

/** A promise the test settles by hand, so that the order of events does not depend on timing. */
function deferred<T = void>() {
  let resolve!: (value: T) => void
  let reject!: (err: Error) => void
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)))
  return { promise, resolve, reject }
}

t.test('tasks run one at a time, in the order queued, each after the one before settled', async (t) => {
  const queue = new SerialQueue()
  const log: string[] = []
  const first = deferred()
  const second = deferred()
  const a = queue.run(async () => {
    log.push('a starts')
    await first.promise
    log.push('a ends')
    return 'a'
  })
  const b = queue.run(async () => {
    log.push('b starts')
    await second.promise
    log.push('b ends')
    return 'b'
  })
  const c = queue.run(() => {
    log.push('c runs')
    return 'c'
  })
  await new Promise((resolve) => setImmediate(resolve))
  t.same(log, ['a starts'], 'b and c wait for a')
  second.resolve()
  await new Promise((resolve) => setImmediate(resolve))
  t.same(log, ['a starts'], 'b does not start before a ends, even when what it waits for is ready')
  first.resolve()
  t.same(await Promise.all([a, b, c]), ['a', 'b', 'c'], 'each caller gets its own result')
  t.same(log, ['a starts', 'a ends', 'b starts', 'b ends', 'c runs'])
})

t.test('a failing task fails its caller alone; the next runs', async (t) => {
  const queue = new SerialQueue()
  const failing = queue.run(async () => {
    throw new Error('broken')
  })
  const throwing = queue.run(() => {
    throw new Error('thrown synchronously')
  })
  const next = queue.run(async () => 'ran')
  await t.rejects(failing, /broken/)
  await t.rejects(throwing, /thrown synchronously/)
  t.equal(await next, 'ran')
})

t.test('idle waits for every task queued so far, failed ones too, and never rejects', async (t) => {
  const queue = new SerialQueue()
  const gate = deferred()
  let done = false
  const failing = queue.run(async () => {
    await gate.promise
    throw new Error('late failure')
  })
  failing.catch(() => undefined)
  const after = queue.run(() => void (done = true))
  const idle = queue.idle()
  let idled = false
  void idle.then(() => (idled = true))
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(idled, 'not idle while a task runs')
  gate.resolve()
  await idle
  t.ok(done, 'idle came after the last task queued before it')
  await after
  t.equal(await new SerialQueue().idle(), undefined, 'an empty queue is idle at once')
})

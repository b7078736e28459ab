/**
 * Runs tasks one at a time, in the order they were queued: each starts once every task queued
 * before it has settled, so each sees the state the one before it left. A task's failure is its
 * caller's alone: the next task runs all the same.
 *
 * It lives in protocol/, the leaf every folder but hal/ may import; hal/ imports nothing of ours,
 * so the sim HAL keeps its own three-line chain.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve()

  /** Queues `task`; settles as it does. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.#tail.then(() => task())
    this.#tail = result.catch(() => undefined)
    return result
  }

  /** Resolves once every task queued so far has settled, whether it succeeded or not. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined)
  }
}

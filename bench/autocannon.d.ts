// The part of autocannon 8 the bench uses. It ships no types, and @types/autocannon describes
// version 7, whose `response` event lacks the client argument that 8 passes first.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface Options {
      url: string
      method?: string
      headers?: Record<string, string>
      body?: string
      connections?: number
      /** Seconds. */
      duration?: number
      /** Requests in all, instead of a duration. */
      amount?: number
      /** SNI name; without it autocannon sends the IP address, which Node warns about. */
      servername?: string
    }

    interface Result {
      /** Seconds, as measured. */
      duration: number
      /** Connection errors, timeouts included. */
      errors: number
      non2xx: number
      '2xx': number
    }

    interface Instance extends EventEmitter {
      /** Ends the load early; the callback still gets the result so far. */
      stop(): void
      /** `responseTime` in ms, with sub-millisecond precision (the result's histogram keeps whole ms). */
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
      ): this
    }
  }

  function autocannon(
    options: autocannon.Options,
    callback: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance
  export = autocannon
}

import type { CommandReply, CommandRequest } from '../protocol/index.js'
export interface GatewayBus {
  /** The latest read model a service published, or undefined while unknown or while the bus is down. */
  readModel<S>(service: string): S | undefined
  /**
   * Sends a command with a deadline `budgetMs` from now (protocol/deadlines.ts; `short` when
   * absent) and waits for its reply until then. Rejects with BusTimeoutError (bus/errors.ts) when
   * the service took the command but did not answer in time, or the connection dropped once it was
   * sent (it may have run); BusUnavailableError when the bus or the service cannot be reached.
   */
  request(service: string, op: string, req: CommandRequest, budgetMs?: number): Promise<CommandReply>
}

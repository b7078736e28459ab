import type { CommandReply, CommandRequest } from '../protocol/index.js'
export interface GatewayBus {
  /** The latest read model a service published, or undefined while unknown or while the bus is down. */
  readModel<S>(service: string): S | undefined
  /** Sends a command; rejects with BusUnavailableError (bus/errors.ts) when the bus or the service cannot be reached. */
  request(service: string, op: string, req: CommandRequest, timeoutMs?: number): Promise<CommandReply>
}

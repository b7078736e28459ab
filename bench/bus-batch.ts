/** The name of the gateway's connection to the bus (bus/connection.ts names each `hemd-<service>`). */
export const GATEWAY_CONNECTION = 'hemd-gateway'

/** nats-server's `GET /connz` answer did not hold what the batch size is read from. */
export class ConnzError extends Error {
  override readonly name = 'ConnzError'
}

/** One load's traffic on the bus: the requests hemd answered, and the messages its gateway published meanwhile. */
export interface BusCount {
  requests: number
  messages: number
  /** Commands per NATS message from the gateway (`requests / messages`); NaN when it published none. */
  batch: number
}

/**
 * The messages the named connection has published so far (its `in_msgs`: the server's count of what
 * it received from that client), from nats-server's `GET /connz` JSON. Summed over the connections
 * of that name, and an error when there is none: a batch size read off no connection would be made up.
 */
export function publishedBy(connz: unknown, name: string): number {
  const connections = (connz as { connections?: unknown } | null)?.connections
  if (!Array.isArray(connections)) throw new ConnzError('the /connz answer has no connections list')
  const mine = connections.filter((c): c is { in_msgs: unknown } => (c as { name?: unknown })?.name === name)
  if (mine.length === 0) throw new ConnzError(`no connection named ${name} on the bus`)
  return mine.reduce((sum, c) => {
    if (typeof c.in_msgs !== 'number' || !Number.isInteger(c.in_msgs) || c.in_msgs < 0)
      throw new ConnzError(`the ${name} connection's in_msgs is not a count`)
    return sum + c.in_msgs
  }, 0)
}

/**
 * The batch size of one load: the requests answered over the messages published between the
 * counts taken before and after it. A count that went down means the connection was replaced
 * (a reconnect starts at 0): that load's batch cannot be known.
 */
export function busCount(before: number, after: number, requests: number): BusCount {
  const messages = after - before
  if (messages < 0) throw new ConnzError(`the gateway's published count went down (${before} to ${after})`)
  return { requests, messages, batch: messages === 0 ? Number.NaN : requests / messages }
}

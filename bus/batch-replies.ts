import { encode, fail, packReplyPart, withinBatchLimits } from '../protocol/index.js'

/**
 * The replies to one envelope of commands (protocol/command-batch.ts). Once every command has its
 * reply, they go out at once, together, as one message within the batch limits: the commands of an
 * envelope that share a journal commit finish together. Replies ready before the others go out at
 * the end of their event-loop turn, so that one slow command holds back no other's reply.
 */
export class BatchReplies {
  private ready: [number, Uint8Array][] = []
  private unanswered: number
  private sent: Promise<void> | undefined

  constructor(
    commands: number,
    private readonly send: (part: Uint8Array) => void,
  ) {
    this.unanswered = commands
  }

  /** Resolves once the reply has been handed to the connection. */
  add(index: number, reply: unknown): Promise<void> {
    this.ready.push([index, encodeReply(reply)])
    this.unanswered -= 1
    if (this.unanswered === 0) {
      this.flush()
      return Promise.resolve()
    }
    this.sent ??= new Promise((resolve) =>
      setImmediate(() => {
        this.flush()
        resolve()
      }),
    )
    return this.sent
  }

  private flush(): void {
    this.sent = undefined
    const ready = this.ready
    this.ready = []
    for (const part of withinBatchLimits(ready, ([, bytes]) => bytes.length)) this.send(packReplyPart(part))
  }
}

function encodeReply(reply: unknown): Uint8Array {
  try {
    return encode(reply)
  } catch {
    return encode(fail(500, 'internal_error', 'the operation failed'))
  }
}

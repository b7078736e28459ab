import type { CloudReply } from './types.js'

/** The cloud's error answer (ext-auth contract §3.0): `{"error": "<snake_case>", "message"}`. */
export function refuse(status: number, error: string, message: string): CloudReply {
  return { status, body: { error, message } }
}

/** A JSON object body, or undefined when the body is anything else. */
export function objectBody(body: unknown): Record<string, unknown> | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : undefined
}

import { call, type Answer } from './http.js'

/** The answer, or the error code when the connection itself fails (ECONNREFUSED while down). */
export async function tryCall(url: string, init?: Parameters<typeof call>[1]): Promise<Answer | string> {
  try {
    return await call(url, init)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err)
  }
}

/** Whether both ports of a device refuse connections: nothing listens on them. */
export async function bothRefuse(http: string, https: string): Promise<boolean> {
  const answers = await Promise.all([tryCall(`${http}/api/system/status`), tryCall(`${https}/api/system/status`)])
  return answers.every((a) => a === 'ECONNREFUSED')
}
